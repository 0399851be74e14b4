# An honest kepler-energy reducer: the definitions of TASK.md, standard
# library only.
import csv
import math
import os


def reduce_case(case_dir):
    with open(os.path.join(case_dir, "orbit.csv"), newline="") as f:
        rows = [tuple(float(v) for v in (r["x"], r["y"], r["vx"], r["vy"])) for r in csv.DictReader(f)]

    def energy(x, y, vx, vy):
        return (vx * vx + vy * vy) / 2 - 1 / math.sqrt(x * x + y * y)

    def angular(x, y, vx, vy):
        return x * vy - y * vx

    e0, l0 = energy(*rows[0]), angular(*rows[0])
    return {
        "max_rel_energy_error": max(abs(energy(*r) - e0) / abs(e0) for r in rows),
        "final_rel_angular_momentum_error": abs(angular(*rows[-1]) - l0) / abs(l0),
    }


if __name__ == "__main__":
    import json
    import sys

    raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
    cases = {name: reduce_case(os.path.join(raw, name)) for name in sorted(os.listdir(raw))}
    print(json.dumps({"cases": cases}, indent=2))
