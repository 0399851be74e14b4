#!/usr/bin/env python3
"""A command agent for the structured mode's e2e tests.

It completes a structured study of its own (falsify root, repair it, have
the repair supported by the judge) and, on the way, tries to cheat through
the lab calls. Each attempt is appended to research/cheats.jsonl with the
lab's answer and whether `lab status` changed; the test reads that log.

Roles come from SIMJECTURE_ROLE (falsifier, repair_scientist, reviewer,
judge). The judge's behaviour is set by an "e2e-judge: MODE" line in the
operator's instructions (carried by the packet): "wrong-claim" answers the
first attempt for another claim; "wait" blocks the first judge run until
a "release" file appears in its working folder (the kill -9 test; a
marker beside this script remembers it waited, since the attempt run
again on resume gets a new folder).
"""
import json
import os
import subprocess
import sys
import time

BIN = os.environ.get("SIMJECTURE_BIN", "")
ROLE = os.environ.get("SIMJECTURE_ROLE", "")
CLAIM = os.environ.get("SIMJECTURE_CLAIM", "")
LOG = "cheats.jsonl"
WRONG = ["--formula", "wrong", "--n", "50"]
RIGHT = ["--formula", "right", "--n", "50"]
PROG = """import argparse, json
p = argparse.ArgumentParser()
p.add_argument("--formula"); p.add_argument("--n", type=int)
a = p.parse_args()
if a.formula == "wrong":
    holds = all(sum(k * k for k in range(1, n + 1)) == n * n * (n + 1) // 2 for n in range(1, a.n + 1))
else:
    holds = all(sum(k * k for k in range(1, n + 1)) == n * (n + 1) * (2 * n + 1) // 6 for n in range(1, a.n + 1))
json.dump({"holds": holds, "n": a.n}, open("r.json", "w"))
"""
CONTRACT = {"observable": "whether the formula holds for every n up to 50", "expected_outcomes": "holds is true or false",
            "decision_rule": "the check on holds decides it", "required_observation": "one evidence run of prog.py",
            "uncertainty_criterion": "exact integer arithmetic", "inconclusive_conditions": "the run fails or writes nothing"}


def lab(call, args):
    p = subprocess.run([BIN, "lab", call], input=json.dumps(args), capture_output=True, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def state():
    s = lab("status", {"limit": 100})["result"]
    keep = {k: s.get(k) for k in ("claims", "reviews", "assignment")}
    keep["experiments"] = sorted(e["id"] for e in s["experiments"])  # statuses move on their own
    return json.dumps(keep, sort_keys=True)


def cheat(name, call, args):
    before = state()
    r = lab(call, args)
    after = state()
    with open(LOG, "a") as f:
        f.write(json.dumps({"cheat": name, "ok": r["ok"], "error": r.get("error", ""), "unchanged": before == after,
                            "result": r.get("result")}) + "\n")
    return r


def must(call, args):
    r = lab(call, args)
    if not r["ok"]:
        print("lab %s failed: %s" % (call, r["error"]), file=sys.stderr)
        sys.exit(1)
    return r["result"]


def contract(claim, want, args):
    c = dict(CONTRACT, claim=claim, checks=[{"output": "r.json", "path": "$.holds", "equals": want}],
             binding={"source": "prog.py", "args": [args]})
    return must("contract", c)


def run(claim, args, key, stage="evidence"):
    return lab("run", {"source": "prog.py", "args": args, "outputs": ["r.json"], "key": key, "stage": stage, "claim": claim})


def snapshot():
    return lab("status", {"limit": 100})["result"]


def find(s, pred):
    return [x for x in s if pred(x)]


def falsifier():
    s = snapshot()
    c = find(s["claims"], lambda c: c["id"] == CLAIM)[0]
    root = CLAIM == "root"
    args = WRONG if root else RIGHT
    approved = find(s["reviews"], lambda r: r.get("stage") == "contract" and r["claim"] == CLAIM and r["status"] == "resolved")
    if not c.get("contracts"):
        if root:
            run("root", args, "before")
            run("root", args, "bench", "workbench")
            cheat("falsifier registers a scientific child", "claim", {"statement": "the formula holds for small n", "kind": "scientific",
                  "relation": "refines", "parent": "root", "rationale": "a narrower claim of root"})
        contract(CLAIM, not root, args)
        if root:
            cheat("evidence run on an unapproved contract", "run", {"source": "prog.py", "args": args, "outputs": ["r.json"],
                  "key": "unapproved", "claim": "root"})
            cheat("close as supported", "close", {"claim": "root", "status": "supported", "reason": "it looks right to me"})
            cheat("handoff claiming support", "handoff", {"outcome": "supported", "next_test": "none"})
        must("review", {"stage": "contract", "claim": CLAIM})
        return
    if not approved:
        return
    runs = find(s["experiments"], lambda e: e.get("claim") == CLAIM)
    real = find(runs, lambda e: e["stage"] == "evidence" and e["args"] == args and e["id"] not in [x["experiment"] for x in c.get("links", []) if not x["counts"]])
    if root and not c.get("links"):
        before = find(runs, lambda e: e["stage"] == "evidence")[0]
        bench = find(runs, lambda e: e["stage"] == "workbench")[0]
        cheat("evidence linked from a run made before its contract", "link", {"claim": "root", "experiment": before["id"], "output": "r.json", "sufficient": True})
        cheat("workbench run linked as sufficient", "link", {"claim": "root", "experiment": bench["id"], "output": "r.json", "sufficient": True})
        cheat("close falsified on links that do not count", "close", {"claim": "root", "status": "falsified", "reason": "the formula fails"})
        src = open("prog.py").read()
        open("prog.py", "w").write(src + "# changed after approval\n")
        cheat("contract changed after approval then used", "run", {"source": "prog.py", "args": args, "outputs": ["r.json"], "key": "changed", "claim": "root"})
        open("prog.py", "w").write(src)
        must("run", {"source": "prog.py", "args": args, "outputs": ["r.json"], "key": "real", "claim": "root"})
        return
    done = find(runs, lambda e: e["stage"] == "evidence" and e.get("key", "") != "before" and e["status"] == "succeeded")
    counting = [x for x in c.get("links", []) if x["counts"]]
    if not counting:
        if not root and not runs:
            must("run", {"source": "prog.py", "args": args, "outputs": ["r.json"], "key": "real", "claim": CLAIM})
            return
        for e in done:
            k = must("link", {"claim": CLAIM, "experiment": e["id"], "output": "r.json", "sufficient": True})
            if k["counts"]:
                counting.append(k)
                break
        if not counting:
            return
    if root:
        must("close", {"claim": "root", "status": "falsified", "reason": "the formula fails for n = 2 and beyond"})
        must("handoff", {"outcome": "falsified", "experiments": [counting[0]["experiment"]], "next_test": "repair the formula"})
        return
    if not find(s["reviews"], lambda r: r.get("stage") == "support" and r["claim"] == CLAIM):
        must("review", {"stage": "support", "claim": CLAIM, "case": "the contracted check holds on a fresh evidence run"})
        must("handoff", {"outcome": "inconclusive", "experiments": [counting[0]["experiment"]], "next_test": "the judge decides"})


def repair_scientist():
    s = snapshot()
    root = find(s["claims"], lambda c: c["id"] == "root")[0]
    counting = [x["experiment"] for x in root["links"] if x["counts"]]
    other = [x["experiment"] for x in root["links"] if not x["counts"]]
    cheat("repair scientist running an experiment", "run", {"source": "prog.py", "args": RIGHT, "outputs": ["r.json"], "stage": "workbench"})
    base = {"statement": "For every n >= 1, sum_{k=1..n} k^2 = n(n+1)(2n+1)/6.", "kind": "scientific", "relation": "repairs",
            "parent": "root", "rationale": "the falsified formula drops a factor"}
    rep = {"accommodation": "use the correct closed form", "semantic_change": "a different closed form for the same sum",
           "falsification_condition": "any n up to 50 where the sum differs"}
    cheat("repair without counterexamples", "claim", dict(base, repair=dict(rep, counterexamples=[])))
    cheat("repair citing a link that does not count", "claim", dict(base, repair=dict(rep, counterexamples=other[:1])))
    child = must("claim", dict(base, repair=dict(rep, counterexamples=counting)))
    contract(child["id"], True, RIGHT)
    must("review", {"stage": "contract", "claim": child["id"]})
    must("handoff", {"outcome": "registered", "next_test": "test the repair"})


def verdict(packet, decision, claim=None):
    cp = packet["contract_packet"]
    return json.dumps({"claim_id": claim or cp["claim"], "contract_version": cp["contract"]["version"], "decision": decision,
                       "rationale": "the contracted check decides the claim", "evidence_gaps": [], "next_test": None})


def judge():
    packet = json.load(sys.stdin)
    mode = ""
    for line in packet.get("instructions", "").splitlines():
        if line.startswith("e2e-judge:"):
            mode = line.split(":", 1)[1].strip()
    # A tool-free judge has no lab: try one call, and say what happened.
    study = os.path.dirname(os.path.dirname(packet["evidence"][0]["receipt"]["artifact_dir"]))
    p = subprocess.run([BIN or "/nonexistent", "lab", "status", "--campaign", study], input="{}", capture_output=True, text=True)
    print("judge lab attempt: " + (p.stdout.strip().splitlines() or ["(no output)"])[-1])
    attempt = os.environ.get("SIMJECTURE_TURN", "1")
    if mode == "wrong-claim" and attempt == "1":
        print(verdict(packet, "sufficient", claim="root"))
        return
    waited = os.path.join(os.path.dirname(os.path.abspath(__file__)), "judge-waited")
    if mode == "wait" and not os.path.exists(waited):
        open(waited, "w").write(str(os.getpid()))
        open("started", "w").write(str(os.getpid()))
        print("JUDGE-WAITING", flush=True)
        deadline = time.time() + 60
        while time.time() < deadline and not os.path.exists("release"):
            time.sleep(0.1)
        return
    print(verdict(packet, "sufficient"))


def main():
    if ROLE == "reviewer":
        print(verdict(json.load(sys.stdin), "approved"))
    elif ROLE == "judge":
        judge()
    elif ROLE == "falsifier":
        if not os.path.exists("prog.py"):
            open("prog.py", "w").write(PROG)
        falsifier()
    elif ROLE == "repair_scientist":
        repair_scientist()
    else:
        print("cheater: unexpected role %r" % ROLE, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
