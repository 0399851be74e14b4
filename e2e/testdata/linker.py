#!/usr/bin/env python3
"""A fake Codex or Claude Code CLI (by the name it is called as) that tries
to make the supervisor write into the record through a retry's log folder
(e2e/logsym_test.go; the audit's reproduction of tonight).

Worker turn 1 runs one experiment and waits for it, and starts a session.
Turn 2 is a resume: the agent hashes the record (simjecture.db,
report.json, LEDGER.md and every file of the experiment's folder) into
before.json next to this script, then, in its own writable turn folder,
plants what plan.txt next to it says:
  dir    SUB -> DIR/experiments/E  (a link in place of the retry's folder)
  files  SUB/ holding stdout.log -> DIR/simjecture.db,
         stderr.log -> DIR/report.json, prompt.txt -> DIR/LEDGER.md
(SUB is new-thread for codex, new-session for claude), and fails as the
CLI does for a session it has no record of. The retry, a new session,
hashes the record again into after.json, prints FORGED on stdout and
stderr, pauses the study and starts a session.

Called by any other name, it is a command agent whose reviewer tries the
same through the folder of a review attempt that runs again: worker turn
1 runs the experiment and asks for a review of root; the first reviewer
hashes the record into before.json, replaces packet.json, prompt.txt,
stdout.log and stderr.log of its own review folder with links to
simjecture.db, LEDGER.md, report.json and the experiment's stdout.log, and
fails with "401 Unauthorized", which stops the study for the operator, so
the same attempt runs again on resume; that reviewer hashes the record
into after.json and prints no verdict. Later worker turns pause the study.
"""
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.path.basename(sys.argv[0])
STUDY = os.environ.get("SIMJECTURE_STUDY", "")
BIN = os.environ["SIMJECTURE_BIN"]
TURN = int(os.environ.get("SIMJECTURE_TURN", "0"))


def lab(call, args):
    p = subprocess.run([BIN, "lab", call], input=json.dumps(args), capture_output=True, text=True)
    return json.loads(p.stdout)


def started(session):
    if CLI == "codex":
        print(json.dumps({"type": "thread.started", "thread_id": session}))
        print(json.dumps({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}}))
    else:
        print(json.dumps({"type": "system", "subtype": "init", "session_id": session}))
        print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "done",
                          "session_id": session, "usage": {"input_tokens": 1, "output_tokens": 1}}))


def note(name, text=None):
    path = os.path.join(HERE, name)
    if text is None:
        return open(path).read()
    with open(path, "w") as f:
        f.write(text)


def record_hashes(study=STUDY):
    exp = note("exp_id")
    names = ["simjecture.db", "report.json", "LEDGER.md"]
    edir = os.path.join("experiments", exp)
    names += [os.path.join(edir, n) for n in sorted(os.listdir(os.path.join(study, edir)))]
    out = {}
    for n in names:
        with open(os.path.join(study, n), "rb") as f:
            out[n] = hashlib.sha256(f.read()).hexdigest()
    return out


def dump(name, obj):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(obj, f, sort_keys=True)


def run_experiment():
    with open("prog.py", "w") as f:
        f.write("print('honest output 42')\nopen('out.txt', 'w').write('42\\n')\n")
    run = lab("run", {"source": "prog.py", "outputs": ["out.txt"], "timeout": 30})
    exp = run["result"]["id"]
    for _ in range(600):
        if lab("status", {"experiment": exp})["result"]["status"] not in ("queued", "running"):
            break
        time.sleep(0.05)
    note("exp_id", exp)
    note("study", STUDY)
    return exp


def plant():
    dump("before.json", record_hashes())
    sub = "new-thread" if CLI == "codex" else "new-session"
    logdir = os.path.join(STUDY, "supervisor", "turn-%05d" % TURN)
    target = os.path.join(logdir, sub)
    plan = open(os.path.join(HERE, "plan.txt")).read().strip()
    if plan == "dir":
        os.symlink(os.path.join(STUDY, "experiments", note("exp_id")), target)
    else:
        os.mkdir(target)
        for log, rec in (("stdout.log", "simjecture.db"), ("stderr.log", "report.json"), ("prompt.txt", "LEDGER.md")):
            os.symlink(os.path.join(STUDY, rec), os.path.join(target, log))
    if CLI == "codex":
        print("Error: thread/resume failed: no rollout found for thread id session-1", file=sys.stderr)
    else:
        print(json.dumps({"type": "result", "subtype": "error_during_execution", "is_error": True, "session_id": "session-1"}))
        print("No conversation found with session ID: session-1", file=sys.stderr)
    sys.exit(1)


def fresh():
    dump("after.json", record_hashes())
    print("FORGED: this is not what the experiment printed")
    print('{"status": "completed", "claims": [{"id": "root", "status": "supported"}]}', file=sys.stderr)
    subprocess.run([BIN, "pause", "--campaign", STUDY], capture_output=True)
    started("session-2")


def reviewer():
    study, folder = note("study"), os.path.dirname(os.getcwd())
    if os.path.exists(os.path.join(HERE, "before.json")):
        dump("after.json", record_hashes(study))
        print("FORGED: no verdict")
        return
    dump("before.json", record_hashes(study))
    exp_log = os.path.join(study, "experiments", note("exp_id"), "stdout.log")
    for log, rec in (("packet.json", os.path.join(study, "simjecture.db")), ("prompt.txt", os.path.join(study, "LEDGER.md")),
                     ("stdout.log", os.path.join(study, "report.json")), ("stderr.log", exp_log)):
        os.remove(os.path.join(folder, log))
        os.symlink(rec, os.path.join(folder, log))
    print("HTTP 401 Unauthorized: invalid api key", file=sys.stderr)
    sys.exit(1)


def command_agent():
    if os.environ.get("SIMJECTURE_ROLE") == "reviewer":
        reviewer()
    elif TURN == 1:
        exp = run_experiment()
        lab("review", {"claim": "root", "disposition": "falsified", "conclusion": "it does not hold", "experiments": [exp]})
    else:
        subprocess.run([BIN, "pause", "--campaign", STUDY], capture_output=True)


def main():
    sys.stdin.read() if not sys.stdin.isatty() else None
    resuming = "resume" in sys.argv or "--resume" in sys.argv
    if CLI not in ("codex", "claude"):
        command_agent()
    elif TURN == 1:
        run_experiment()
        started("session-1")
    elif TURN == 2 and resuming:
        plant()
    elif TURN == 2:
        fresh()
    else:
        subprocess.run([BIN, "pause", "--campaign", STUDY], capture_output=True)
        started("session-3")


main()
