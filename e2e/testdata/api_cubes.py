"""The experiment the mock API agent writes (e2e/api_mock_test.go).

It checks sum_{k<=n} k^3 = (n(n+1)/2)^2 and records its own argv and
environment in the result, so the tests' search for the API key also
covers what an experiment sees.
"""
import argparse
import json
import os
import sys

p = argparse.ArgumentParser()
p.add_argument("--n", type=int, required=True)
p.add_argument("--out", required=True)
a = p.parse_args()
total, worst = 0, 0
for k in range(1, a.n + 1):
    total += k ** 3
    worst = max(worst, abs(total - (k * (k + 1) // 2) ** 2))
with open(a.out, "w") as f:
    json.dump({"n": a.n, "max_abs_diff": worst, "holds": worst == 0,
               "argv": sys.argv, "env": dict(os.environ)}, f)
print("n=%d max_abs_diff=%d" % (a.n, worst))
