#!/usr/bin/env python3
"""A scripted research agent for simjecture's end-to-end tests.

It speaks the lab protocol through $SIMJECTURE_BIN (contract sections 5 and
11) and keeps no state of its own: every worker turn reads the study
snapshot and decides what to do next. Its behaviour comes from lines of the
operator's instructions of the form "e2e-KEY: VALUE":

  e2e-mode: cubes      verify sum_{k<=n} k^3 = (n(n+1)/2)^2 and ask the
                       reviewer to accept root as supported, with a
                       challenge at a larger n
  e2e-mode: kill       run one long sleeper; once it is interrupted, run a
                       short replicate (key retry-1) and ask for review
  e2e-mode: busy       always keep one long sleeper running; never review
  e2e-mode: selfpause  ask the supervisor to pause, and exit
  e2e-mode: slowturn   write its pid to research/agent.pid and sleep
                       e2e-seconds in the turn itself (ignoring SIGTERM
                       when e2e-ignore-term: yes)
  e2e-marker: M        a unique string put in the sleeper's argv
  e2e-seconds: S       how long the sleeper sleeps
  e2e-burn-mb: N       the sleeper holds N MiB and burns CPU instead of sleeping
  e2e-ignore-term: yes the sleeper (or, in slowturn, the agent) ignores
                       SIGTERM
  e2e-save-prompt: yes the worker saves each turn's prompt to
                       research/prompt-TURN.txt and the reviewer its packet
                       to packet.json in its folder
  e2e-pause-turns: N   the worker pauses the study in its first N turns
                       (after saving the prompt), doing nothing else

Anything unexpected makes the agent leave a note and pause the study, so a
test fails fast instead of waiting for the deadline.

As reviewer it reads the packet on stdin, re-hashes every artifact, checks
the recorded numbers and prints the verdict as its last stdout line.
"""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

SIM = '''import argparse, json
p = argparse.ArgumentParser()
p.add_argument("--n", type=int, required=True)
p.add_argument("--out", required=True)
a = p.parse_args()
total, worst = 0, 0
for k in range(1, a.n + 1):
    total += k ** 3
    worst = max(worst, abs(total - (k * (k + 1) // 2) ** 2))
with open(a.out, "w") as f:
    json.dump({"identity": "sum k^3 = (n(n+1)/2)^2", "n": a.n, "checked": a.n,
               "max_abs_diff": worst, "holds": worst == 0}, f)
print("n=%d max_abs_diff=%d" % (a.n, worst))
'''

SLEEPER = '''import argparse, signal, time
p = argparse.ArgumentParser()
p.add_argument("--marker", default="")
p.add_argument("--seconds", type=float, required=True)
p.add_argument("--ignore-term", action="store_true")
p.add_argument("--burn-mb", type=int, default=0)
a = p.parse_args()
if a.ignore_term:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if a.burn_mb:
    held = bytearray(a.burn_mb << 20)
    for i in range(0, len(held), 4096):
        held[i] = 1
    end = time.time() + a.seconds
    while time.time() < end:
        pass
else:
    time.sleep(a.seconds)
with open("done.txt", "w") as f:
    f.write("slept %s s\\n" % a.seconds)
'''

RESOURCES = {"cpus": 1, "memory_mb": 256, "max_file_mb": 16}


def log(msg):
    print("agent: " + msg, file=sys.stderr, flush=True)


def lab(call, args):
    p = subprocess.run([os.environ["SIMJECTURE_BIN"], "lab", call],
                       input=json.dumps(args), capture_output=True, text=True)
    lines = p.stdout.strip().splitlines()
    if not lines:
        raise SystemExit("lab %s: no output (exit %d): %s" % (call, p.returncode, p.stderr))
    resp = json.loads(lines[-1])
    if not resp.get("ok"):
        raise SystemExit("lab %s: %s" % (call, resp.get("error")))
    return resp["result"]


def settings(text):
    out = {}
    for line in (text or "").splitlines():
        line = line.strip()
        if line.startswith("e2e-") and ":" in line:
            k, v = line.split(":", 1)
            out[k[len("e2e-"):].strip()] = v.strip()
    return out


def give_up(why):
    log("giving up: " + why)
    lab("note", {"statement": "e2e agent gives up: " + why})
    subprocess.run([os.environ["SIMJECTURE_BIN"], "pause", "--campaign", os.environ["SIMJECTURE_STUDY"]],
                   stdout=sys.stderr, stderr=sys.stderr)


def write(name, text):
    if os.path.exists(name):
        with open(name) as f:
            if f.read() == text:
                return
    with open(name, "w") as f:
        f.write(text)


def run(source, args, outputs, key="", timeout=60):
    req = {"source": source, "args": args, "outputs": outputs, "timeout": timeout,
           "resources": RESOURCES, "purpose": "e2e " + " ".join(args)}
    if key:
        req["key"] = key
    r = lab("run", req)
    log("run %s %s -> %s %s" % (source, args, r["id"], r["status"]))
    return r


def review_root(snap, experiments, challenge, conclusion):
    for rv in snap.get("reviews") or []:
        if rv.get("claim") == "root":
            if rv.get("status") == "queued":
                return
            verdict = rv.get("verdict") or {}
            if verdict.get("decision") != "approved":
                give_up("the reviewer did not approve: %s" % json.dumps(verdict))
                return
    lab("review", {"claim": "root", "disposition": "supported", "conclusion": conclusion,
                   "experiments": [e["id"] for e in experiments],
                   "challenge": {"strategy": "repeat at a harder case",
                                 "experiments": [e["id"] for e in challenge],
                                 "outcome": "the harder case agrees"}})
    log("requested review of root")


def root_status(snap):
    for c in snap.get("claims") or []:
        if c.get("id") == "root":
            return c.get("status")
    return None


def worker_cubes(snap, cfg):
    write("sim.py", SIM)
    n, big = int(cfg.get("n", "200")), int(cfg.get("challenge-n", "20000"))
    main = run("sim.py", ["--n", str(n), "--out", "result.json"], ["result.json"])
    chal = run("sim.py", ["--n", str(big), "--out", "challenge.json"], ["challenge.json"])
    states = {main["status"], chal["status"]}
    if states - {"queued", "running", "succeeded"}:
        give_up("an experiment ended %s / %s" % (main["status"], chal["status"]))
    elif states == {"succeeded"}:
        review_root(snap, [main, chal], [chal],
                    "the identity holds exactly for every n up to %d and, as a challenge, up to %d" % (n, big))


def sleeper_args(cfg, seconds):
    args = ["--seconds", str(seconds)]
    if cfg.get("ignore-term") == "yes":
        args.append("--ignore-term")
    if cfg.get("burn-mb"):
        args += ["--burn-mb", cfg["burn-mb"]]
    if cfg.get("marker"):
        args = ["--marker", cfg["marker"]] + args
    return args


def worker_kill(snap, cfg):
    write("sleep.py", SLEEPER)
    exps = snap.get("experiments") or []
    if any(e["status"] in ("queued", "running") for e in exps):
        return
    if not exps:
        run("sleep.py", sleeper_args(cfg, cfg.get("seconds", "60")), ["done.txt"], key="first", timeout=120)
        return
    retry = [e for e in exps if e.get("key") == "retry-1"]
    if not retry:
        if not any(e["status"] == "interrupted" for e in exps):
            give_up("expected an interrupted experiment, have %s" % [e["status"] for e in exps])
            return
        run("sleep.py", ["--seconds", "0.2"], ["done.txt"], key="retry-1")
    elif retry[0]["status"] == "succeeded":
        review_root(snap, retry, retry, "the replicate finished after the interruption")
    else:
        give_up("the replicate ended " + retry[0]["status"])


def worker_busy(snap, cfg):
    write("sleep.py", SLEEPER)
    exps = snap.get("experiments") or []
    if any(e["status"] in ("queued", "running") for e in exps):
        return
    run("sleep.py", sleeper_args(cfg, cfg.get("seconds", "30")), ["done.txt"],
        key="run-%d" % len(exps), timeout=600)


def worker():
    prompt = sys.stdin.read()
    study = os.environ["SIMJECTURE_STUDY"]
    with open(os.path.join(study, "operator", "instructions.txt")) as f:
        cfg = settings(f.read())
    mode, turn = cfg.get("mode", ""), os.environ.get("SIMJECTURE_TURN", "0")
    log("worker turn %s, mode %s, cwd %s" % (turn, mode, os.getcwd()))
    if cfg.get("save-prompt") == "yes":
        write("prompt-%s.txt" % turn, prompt)
    if int(turn) <= int(cfg.get("pause-turns", "0")):
        subprocess.run([os.environ["SIMJECTURE_BIN"], "pause", "--campaign", study],
                       stdout=sys.stderr, stderr=sys.stderr, check=True)
        return
    if mode == "selfpause":
        subprocess.run([os.environ["SIMJECTURE_BIN"], "pause", "--campaign", study],
                       stdout=sys.stderr, stderr=sys.stderr, check=True)
        return
    if mode == "slowturn":
        if cfg.get("ignore-term") == "yes":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with open("agent.pid.tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename("agent.pid.tmp", "agent.pid")
        time.sleep(float(cfg.get("seconds", "30")))
        return
    snap = lab("status", {})
    if root_status(snap) == "supported":
        return
    handlers = {"cubes": worker_cubes, "kill": worker_kill, "busy": worker_busy}
    if mode not in handlers:
        give_up("unknown mode %r" % mode)
        return
    handlers[mode](snap, cfg)


def check_artifacts(exp, mode):
    """Returns the evidence gaps of one receipt."""
    gaps = []
    arts = exp.get("artifacts") or {}
    if exp.get("status") != "succeeded" or not arts:
        return ["%s: status %s, %d artifacts" % (exp.get("id"), exp.get("status"), len(arts))]
    for name, meta in sorted(arts.items()):
        path = os.path.join(exp["artifact_dir"], name)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as err:
            gaps.append("%s: cannot read %s: %s" % (exp["id"], name, err))
            continue
        if hashlib.sha256(data).hexdigest() != meta.get("sha256") or len(data) != meta.get("bytes"):
            gaps.append("%s: %s does not match its recorded hash" % (exp["id"], name))
            continue
        if mode == "cubes" and name.endswith(".json"):
            r = json.loads(data)
            n = int(exp["args"][exp["args"].index("--n") + 1])
            if not (r.get("holds") is True and r.get("max_abs_diff") == 0 and r.get("checked") == n == r.get("n")):
                gaps.append("%s: %s does not show the identity for n=%d: %s" % (exp["id"], name, n, r))
    return gaps


def reviewer():
    packet = json.load(sys.stdin)
    cfg = settings(packet.get("instructions"))
    mode = cfg.get("mode", "")
    if cfg.get("save-prompt") == "yes":
        write("packet.json", json.dumps(packet))
    log("reviewing %s as %s in %s" % (packet.get("claim_id"), packet.get("disposition"), os.getcwd()))
    gaps = []
    exps = packet.get("experiments") or []
    if not exps:
        gaps.append("no experiments in the packet")
    for exp in exps:
        gaps += check_artifacts(exp, mode)
    with open("review-notes.txt", "w") as f:
        f.write(json.dumps({"claim": packet.get("claim_id"), "gaps": gaps}) + "\n")
    verdict = {"claim_id": packet.get("claim_id"), "disposition": packet.get("disposition"), "next_test": None}
    if gaps:
        verdict.update(decision="needs_revision", evidence_gaps=gaps,
                       rationale="the re-hashed artifacts do not establish the claim")
    else:
        verdict.update(decision="approved", evidence_gaps=[],
                       rationale="every artifact re-hashes to its receipt and the recorded numbers hold")
    print(json.dumps(verdict))


if __name__ == "__main__":
    if os.environ.get("SIMJECTURE_ROLE") == "reviewer":
        reviewer()
    else:
        worker()
