#!/usr/bin/env python3
"""A command agent that tries to forge the study's record (e2e/enclose_test.go).

Worker turn 1 runs one experiment through `lab run` and waits for it with
`lab status`, then tries, as an adversary would:
  db        open DIR/simjecture.db for writing and UPDATE the claims table
            (root -> supported) with python's sqlite3
  artifact  overwrite the experiment's collected out.txt under DIR/experiments/
  report    rewrite DIR/report.json with root supported
then asks for a review of root with `lab review` and writes what each step
did (the errno, or "written") to attempts.json next to this script, which
the test reads. The reviewer never approves. Every later worker turn pauses
the study.
"""
import errno
import json
import os
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STUDY = os.environ.get("SIMJECTURE_STUDY", "")


def lab(call, args):
    p = subprocess.run([os.environ["SIMJECTURE_BIN"], "lab", call], input=json.dumps(args),
                       capture_output=True, text=True)
    return json.loads(p.stdout)


def attempt(fn):
    try:
        fn()
        return "written"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    except sqlite3.Error as e:
        return "sqlite: " + str(e)


def forge_db(study=STUDY):
    db = os.path.join(study, "simjecture.db")
    os.close(os.open(db, os.O_RDWR))
    con = sqlite3.connect(db)
    con.execute("UPDATE claims SET status = 'supported' WHERE id = 'root'")
    con.commit()


def forge_file(path, text):
    with open(path, "w") as f:
        f.write(text)


def worker():
    if os.environ.get("SIMJECTURE_TURN") != "1":
        subprocess.run([os.environ["SIMJECTURE_BIN"], "pause", "--campaign", STUDY], capture_output=True)
        return
    with open("prog.py", "w") as f:
        f.write("open('out.txt', 'w').write('honest 42\\n')\n")
    run = lab("run", {"source": "prog.py", "outputs": ["out.txt"], "timeout": 30})
    exp = run["result"]["id"]
    for _ in range(600):
        st = lab("status", {"experiment": exp})
        if st["result"]["status"] not in ("queued", "running"):
            break
        time.sleep(0.05)
    out = {"run_ok": run["ok"], "status": st["result"]["status"]}
    out["db"] = attempt(forge_db)
    out["artifact"] = attempt(lambda: forge_file(os.path.join(st["result"]["artifact_dir"], "out.txt"), "forged\n"))
    out["report"] = attempt(lambda: forge_file(os.path.join(STUDY, "report.json"), '{"claims":[{"id":"root","status":"supported"}]}'))
    out["research"] = attempt(lambda: forge_file("own.txt", "mine\n"))
    rev = lab("review", {"claim": "root", "disposition": "supported", "conclusion": "forged: it is supported",
                         "experiments": [exp], "challenge": {"strategy": "none", "experiments": [exp], "outcome": "none"}})
    out["review_ok"] = rev["ok"]
    with open(os.path.join(HERE, "attempts.json"), "w") as f:
        json.dump(out, f)


def reviewer():
    packet = json.loads(sys.stdin.read())
    study = os.path.dirname(os.path.dirname(os.path.dirname(os.getcwd())))  # DIR/supervisor/review-…/work
    with open(os.path.join(HERE, "reviewer_db"), "w") as f:
        f.write(attempt(lambda: forge_db(study)))
    print(json.dumps({"claim_id": packet["claim_id"], "decision": "needs_revision", "disposition": "unresolved",
                      "rationale": "the forger's reviewer never approves anything",
                      "evidence_gaps": ["no honest evidence"], "next_test": None}))


if __name__ == "__main__":
    if os.environ.get("SIMJECTURE_ROLE") == "reviewer":
        reviewer()
    else:
        sys.stdin.read()
        worker()
