"""Run kepler.py at a stated case (and optionally a harder challenge case) and
say, for each, whether max_rel_energy_error stays within a tolerance.

The scientific modes' machine checks compare JSON scalars, so this wrapper
writes the comparison as booleans next to the measured figures:
{"tolerance", "stated": {...figures, "within_tolerance"}, "challenge": {...},
"within_tolerance"}.
"""
import argparse
import json
import subprocess
import sys


def measure(method, e, orbits, steps, out):
    subprocess.run([sys.executable, "kepler.py", "--method", method, "--e", e, "--orbits", orbits,
                    "--steps-per-orbit", steps, "--out", out], check=True)
    with open(out, encoding="utf-8") as f:
        result = json.load(f)
    result.pop("energy_samples", None)
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--method", required=True)
    p.add_argument("--e", required=True)
    p.add_argument("--orbits", required=True)
    p.add_argument("--steps-per-orbit", required=True)
    p.add_argument("--tolerance", type=float, required=True)
    p.add_argument("--challenge-e")
    p.add_argument("--challenge-orbits")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    doc = {"tolerance": args.tolerance}
    doc["stated"] = measure(args.method, args.e, args.orbits, args.steps_per_orbit, "stated_raw.json")
    cases = [doc["stated"]]
    if args.challenge_e:
        doc["challenge"] = measure(args.method, args.challenge_e, args.challenge_orbits, args.steps_per_orbit, "challenge_raw.json")
        cases.append(doc["challenge"])
    for c in cases:
        c["within_tolerance"] = c["max_rel_energy_error"] <= args.tolerance
    doc["within_tolerance"] = all(c["within_tolerance"] for c in cases)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print("%s: within %g: %s" % (args.method, args.tolerance, doc["within_tolerance"]))


if __name__ == "__main__":
    main()
