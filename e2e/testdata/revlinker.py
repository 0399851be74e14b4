#!/usr/bin/env python3
"""A command agent whose reviewer tries to make the supervisor write into
the record through the folder of a review attempt it will be run in again
(e2e/logsym_test.go).

Worker turn 1 runs one experiment, waits for it and asks for a review of
root. The first reviewer hashes the record (simjecture.db, report.json,
LEDGER.md and the experiment's files) into before.json next to this
script, replaces, in its own writable review folder, packet.json,
prompt.txt, stdout.log and stderr.log with links to simjecture.db,
LEDGER.md, report.json and the experiment's stdout.log, and fails with
"401 Unauthorized", which stops the study for the operator: the same
attempt runs again on resume. That reviewer hashes the record again into
after.json and prints no verdict; later worker turns pause the study.
"""
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ["SIMJECTURE_BIN"]


def lab(call, args):
    p = subprocess.run([BIN, "lab", call], input=json.dumps(args), capture_output=True, text=True)
    return json.loads(p.stdout)


def note(name, text=None):
    path = os.path.join(HERE, name)
    if text is None:
        return open(path).read()
    with open(path, "w") as f:
        f.write(text)


def record_hashes():
    study, exp = note("study"), note("exp_id")
    names = ["simjecture.db", "report.json", "LEDGER.md"]
    edir = os.path.join("experiments", exp)
    names += [os.path.join(edir, n) for n in sorted(os.listdir(os.path.join(study, edir)))]
    out = {}
    for n in names:
        with open(os.path.join(study, n), "rb") as f:
            out[n] = hashlib.sha256(f.read()).hexdigest()
    return out


def worker():
    study = os.environ["SIMJECTURE_STUDY"]
    if os.environ.get("SIMJECTURE_TURN") != "1":
        subprocess.run([BIN, "pause", "--campaign", study], capture_output=True)
        return
    with open("prog.py", "w") as f:
        f.write("print('honest output 42')\nopen('out.txt', 'w').write('42\\n')\n")
    exp = lab("run", {"source": "prog.py", "outputs": ["out.txt"], "timeout": 30})["result"]["id"]
    for _ in range(600):
        if lab("status", {"experiment": exp})["result"]["status"] not in ("queued", "running"):
            break
        time.sleep(0.05)
    note("study", study)
    note("exp_id", exp)
    lab("review", {"claim": "root", "disposition": "falsified", "conclusion": "it does not hold",
                   "experiments": [exp]})


def reviewer():
    study, folder = note("study"), os.path.dirname(os.getcwd())
    if os.path.exists(os.path.join(HERE, "before.json")):
        note("after.json", json.dumps(record_hashes(), sort_keys=True))
        print("FORGED: no verdict")
        return
    note("before.json", json.dumps(record_hashes(), sort_keys=True))
    exp_log = os.path.join(study, "experiments", note("exp_id"), "stdout.log")
    for log, rec in (("packet.json", os.path.join(study, "simjecture.db")), ("prompt.txt", os.path.join(study, "LEDGER.md")),
                     ("stdout.log", os.path.join(study, "report.json")), ("stderr.log", exp_log)):
        os.remove(os.path.join(folder, log))
        os.symlink(rec, os.path.join(folder, log))
    print("HTTP 401 Unauthorized: invalid api key", file=sys.stderr)
    sys.exit(1)


sys.stdin.read()
if os.environ.get("SIMJECTURE_ROLE") == "reviewer":
    reviewer()
else:
    worker()
