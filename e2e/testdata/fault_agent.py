#!/usr/bin/env python3
"""A failing `command` agent for simjecture's provider-fault tests.

It reads fault_plan.txt beside itself: one "TURN ACTION TEXT" line per
turn, where TURN is $SIMJECTURE_TURN or "*" for any other turn, and ACTION
is one of

  fail TEXT   print TEXT on stderr and exit 1 (a provider failure)
  say TEXT    print TEXT on stdout and stderr and exit 0 (the agent's own
              words: never classified)
  pause       ask the supervisor to pause the study and exit 0
  garble      overwrite the study's store (simjecture.db, -wal, -shm) in
              place with bytes that are no database, note the time in
              garbled_at beside itself and exit 0

A turn the plan does not name pauses the study, so a test never waits for
its deadline by accident.
"""
import os
import subprocess
import sys
import time


def plan():
    steps = {}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "fault_plan.txt")) as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) >= 2:
                steps[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return steps


def garble():
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.access(os.environ["SIMJECTURE_STUDY"], os.W_OK):  # enclosed: the test garbles it
        open(os.path.join(here, "garble_request"), "w").close()
        for _ in range(600):
            if os.path.exists(os.path.join(here, "garbled_at")):
                return
            time.sleep(0.05)
        return
    db = os.path.join(os.environ["SIMJECTURE_STUDY"], "simjecture.db")
    for path in (db, db + "-wal", db + "-shm"):
        size = os.path.getsize(path)
        with open(path, "r+b") as f:  # same file, same size: open handles see it too
            f.write((b"not a database " * (size // 15 + 1))[:size])
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "garbled_at"), "w") as f:
        f.write("%.6f\n" % time.time())


def main():
    sys.stdin.read()
    steps = plan()
    action, text = steps.get(os.environ.get("SIMJECTURE_TURN", ""), steps.get("*", ("pause", "")))
    if action == "fail":
        print(text, file=sys.stderr, flush=True)
        return 1
    if action == "garble":
        garble()
        return 0
    if action == "say":
        print(text, flush=True)
        print(text, file=sys.stderr, flush=True)
        return 0
    subprocess.run([os.environ["SIMJECTURE_BIN"], "pause", "--campaign", os.environ["SIMJECTURE_STUDY"]],
                   stdout=sys.stderr, stderr=sys.stderr, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
