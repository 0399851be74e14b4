#!/usr/bin/env python3
# A command agent for `bench run`: its first turn delivers a reducer that
# returns zeros; a later turn, told which checks failed, delivers the
# honest reducer ($BENCH_HONEST) and its result.json.
import os
import shutil
import subprocess
import sys

prompt = sys.stdin.read()
turn = int(os.environ["SIMJECTURE_TURN"])
with open("FINDINGS.md", "w") as f:
    f.write("Turn %d: drift grows with eccentricity.\n" % turn)
if turn == 1:
    with open("reduce.py", "w") as f:
        f.write("def reduce_case(d):\n    return {'max_rel_energy_error': 0.0, 'final_rel_angular_momentum_error': 0.0}\n")
    with open("result.json", "w") as f:
        f.write('{"cases": {}}\n')
    sys.exit(0)
if "Failed checks" not in prompt:
    sys.exit("no feedback in the prompt")
shutil.copy(os.environ["BENCH_HONEST"], "reduce.py")
result = subprocess.run([sys.executable, "reduce.py", "raw"], capture_output=True, text=True, check=True)
with open("result.json", "w") as f:
    f.write(result.stdout)
