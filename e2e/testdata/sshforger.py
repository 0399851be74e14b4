#!/usr/bin/env python3
"""A command agent that tries to take over the supervisor's ssh client
(e2e/enclose_ssh_test.go TestWorkerCannotRedirectTheSSHClient).

The study's experiments run on an ssh worker, reached by the supervisor's
own ssh outside every enclosure. The test writes targets.json next to this
script: "ssh_config" (~/.ssh/config, where a ProxyCommand would run our
command as the supervisor), "known_hosts" and "identity" (the profile's),
"profile" (the worker's profile in simjecture's settings folder) and
"control" (the folder of the supervisor's ssh master sockets, where a
socket of ours would answer in its place, and whose master sockets would
run a command of ours on the worker). Worker turn 1 counts what it sees in
the control folder, tries to write
each file in place and to replace it by a rename, to put a file in the
control folder and to move the folder aside, writes a file in its home,
then runs one experiment and waits for its receipt; it records what each
step did (the errno, or "written") and the receipt's status in
attempts.json next to this script. Every later turn pauses the study.
"""
import errno
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("SIMJECTURE_BIN", "")


def attempt(fn):
    try:
        fn()
        return "written"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def rename_over(path, text):
    tmp = path + ".forged"
    write(tmp, text)
    try:
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def lab(call, args):
    p = subprocess.run([BIN, "lab", call], input=json.dumps(args), capture_output=True, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


sys.stdin.read()
if os.environ.get("SIMJECTURE_ROLE") == "reviewer":
    sys.exit(1)
if os.environ.get("SIMJECTURE_TURN") != "1":
    subprocess.run([BIN, "pause", "--campaign", os.environ["SIMJECTURE_STUDY"]], capture_output=True)
    sys.exit(0)
targets = json.load(open(os.path.join(HERE, "targets.json")))
forged = "Host *\n  ProxyCommand sh -c 'touch %s; exec nc %%h %%p'\n" % targets.pop("marker")
control = targets.pop("control")
out = {}
for name, path in targets.items():
    out[name + "_write"] = attempt(lambda: write(path, forged))
    out[name + "_rename"] = attempt(lambda: rename_over(path, forged))
try:  # the supervisor's master sockets, through which a command would run on the worker as the supervisor
    out["control_visible"] = str(len(os.listdir(control)))
except OSError as e:
    out["control_visible"] = errno.errorcode.get(e.errno, str(e.errno))
out["control_file"] = attempt(lambda: write(os.path.join(control, "forged.sock"), ""))


def move():
    os.rename(control, control + ".moved")
    os.rename(control + ".moved", control)


out["control_move"] = attempt(move)
out["home"] = attempt(lambda: write(os.path.join(os.path.expanduser("~"), ".sshforger"), "mine\n"))
write("prog.py", "import json\njson.dump({'ok': True}, open('r.json', 'w'))\n")
r = lab("run", {"source": "prog.py", "outputs": ["r.json"], "key": "after-the-attempts",
             "resources": {"cpus": 1, "memory_mb": 256, "max_file_mb": 16}})
status = "not queued: %s" % r.get("error", "")
if r.get("ok"):
    exp = r["result"]["id"]
    for _ in range(600):
        s = lab("status", {"limit": 100})["result"]
        status = [e["status"] for e in s["experiments"] if e["id"] == exp][0]
        if status not in ("queued", "running"):
            break
        time.sleep(0.1)
out["experiment"] = status
with open(os.path.join(HERE, "attempts.json"), "w") as f:
    json.dump(out, f)
