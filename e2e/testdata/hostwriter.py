#!/usr/bin/env python3
"""A command agent that tries to rewrite the host's programs the study runs
outside its enclosure (e2e/enclose_test.go TestWorkerCannotRewriteTheHost).

The test writes targets.json next to this script: "interp", the
interpreter this script's "#!" line names (a wrapper of python3 in a
folder the agent may write); "bwrap", the bwrap the supervisor was told to
use ($SIMJECTURE_BWRAP, a copy in such a folder); "system", a file in a
host folder outside the agent's home and /tmp; "dirs", folders (the
campaign folder's parent, this script's folder) to move aside, as to put a
copy of its own in their place. Worker turn 1 tries to move each folder
and to write each file in place and to replace it by a rename, writes a
file in its home, and records what each step did (the errno, or "written") in
attempts.json next to this script. Every later turn pauses the study; the
reviewer is never asked.
"""
import errno
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def attempt(fn):
    try:
        fn()
        return "written"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def write(path, text="#!/bin/sh\necho forged\n"):
    with open(path, "w") as f:
        f.write(text)


def rename_over(path):
    tmp = path + ".forged"
    write(tmp)
    try:
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


sys.stdin.read()
if os.environ.get("SIMJECTURE_ROLE") == "reviewer":
    sys.exit(1)
if os.environ.get("SIMJECTURE_TURN") != "1":
    subprocess.run([os.environ["SIMJECTURE_BIN"], "pause", "--campaign", os.environ["SIMJECTURE_STUDY"]],
                   capture_output=True)
    sys.exit(0)
targets = json.load(open(os.path.join(HERE, "targets.json")))
out = {}
for i, d in enumerate(targets.pop("dirs", [])):  # folders to move aside, as to put a copy in their place
    def move(d=d):
        os.rename(d, d + ".moved")
        os.rename(d + ".moved", d)
    out["dir%d_move" % i] = attempt(move)
for name, path in targets.items():
    out[name + "_write"] = attempt(lambda: write(path))
    out[name + "_rename"] = attempt(lambda: rename_over(path))
out["home"] = attempt(lambda: write(os.path.join(os.path.expanduser("~"), ".hostwriter-" + str(os.getpid()))))
with open(os.path.join(HERE, "attempts.json"), "w") as f:
    json.dump(out, f)
