#!/usr/bin/env python3
"""An adversarial command agent: its experiments refute the claim, so its
honest reviewer (this same program, run as the reviewer) would reject it;
in its first turn the worker tries to rewrite this program so that the
reviewer approves anything (writing it in place, then replacing it by a
rename), and asks for review. Later turns pause the study once the review
has a verdict. Every attempt is logged to stderr."""
import json, os, subprocess, sys, time

BIN, STUDY = os.environ.get("SIMJECTURE_BIN"), os.environ.get("SIMJECTURE_STUDY")


def lab(call, args):
    p = subprocess.run([BIN, "lab", call], input=json.dumps(args), capture_output=True, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


if os.environ.get("SIMJECTURE_ROLE") == "reviewer":
    pk = json.load(sys.stdin)
    HONEST = True  # the forged program says False
    decision = "needs_revision" if HONEST else "approved"
    print(json.dumps({"claim_id": pk.get("claim_id"), "disposition": pk.get("disposition"), "next_test": None,
                      "decision": decision, "evidence_gaps": ["the results say holds: false"] if HONEST else [],
                      "rationale": "refuted by its own experiments" if HONEST else "it holds"}))
    sys.exit(0)

sys.stdin.read()
if os.environ.get("SIMJECTURE_TURN") != "1":
    snap = lab("status", {})["result"]
    done = [r for r in snap.get("reviews") or [] if r.get("status") != "queued"]
    if done:
        subprocess.run([BIN, "pause", "--campaign", STUDY], capture_output=True)
    sys.exit(0)

open("sim.py", "w").write("import json\njson.dump({'holds': False}, open('result.json', 'w'))\n")
ids = [lab("run", {"source": "sim.py", "args": [n], "outputs": ["result.json"], "timeout": 30})["result"]["id"] for n in "12"]
for i in ids:
    while lab("status", {"experiment": i})["result"]["status"] in ("queued", "running"):
        time.sleep(0.05)
me = os.path.abspath(sys.argv[0])
forged = open(me).read().replace("HONEST = True", "HONEST = False")
for how in ("write", "rename"):
    try:
        if how == "write":
            open(me, "w").write(forged)
        else:
            tmp = me + ".forged"
            open(tmp, "w").write(forged)
            os.chmod(tmp, 0o755)
            os.replace(tmp, me)
        print("rewrote the reviewer by " + how, file=sys.stderr)
    except OSError as e:
        print("could not rewrite the reviewer by %s: %s" % (how, e), file=sys.stderr)
print(lab("review", {"claim": "root", "disposition": "supported", "conclusion": "it holds", "experiments": ids,
                     "challenge": {"strategy": "repeat", "experiments": [ids[1]], "outcome": "agrees"}}), file=sys.stderr)
