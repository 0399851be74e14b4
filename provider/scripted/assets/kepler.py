#!/usr/bin/env python3
"""Integrate a Kepler orbit and measure how well the total energy is conserved.

Units: GM = 1 and semi-major axis a = 1, so the period is 2*pi and the exact
specific energy is -1/2. The body starts at periapsis, r = a(1 - e), moving
perpendicular to the radius with the vis-viva speed. Standard library only.
"""
import argparse
import json
import math
import sys
import time

GM = 1.0
A = 1.0


def energy(x, y, vx, vy):
    return 0.5 * (vx * vx + vy * vy) - GM / math.hypot(x, y)


def angular_momentum(x, y, vx, vy):
    return x * vy - y * vx


def accel(x, y):
    r = math.hypot(x, y)
    f = -GM / (r * r * r)
    return f * x, f * y


def step_euler(x, y, vx, vy, dt):
    ax, ay = accel(x, y)
    return x + dt * vx, y + dt * vy, vx + dt * ax, vy + dt * ay


def step_leapfrog(x, y, vx, vy, dt):
    # Kick-drift-kick (velocity Verlet): symplectic and time-reversible.
    ax, ay = accel(x, y)
    vx += 0.5 * dt * ax
    vy += 0.5 * dt * ay
    x += dt * vx
    y += dt * vy
    ax, ay = accel(x, y)
    vx += 0.5 * dt * ax
    vy += 0.5 * dt * ay
    return x, y, vx, vy


STEPPERS = {"euler": step_euler, "leapfrog": step_leapfrog}


def integrate(method, e, orbits, steps_per_orbit, samples):
    step = STEPPERS[method]
    period = 2.0 * math.pi * math.sqrt(A ** 3 / GM)
    dt = period / steps_per_orbit
    steps = int(round(orbits * steps_per_orbit))
    x, y = A * (1.0 - e), 0.0
    vx, vy = 0.0, math.sqrt(GM / A * (1.0 + e) / (1.0 - e))
    e0 = energy(x, y, vx, vy)
    l0 = angular_momentum(x, y, vx, vy)
    max_err = 0.0
    every = max(1, steps // samples)
    trace = [{"t": 0.0, "energy": e0}]
    for i in range(1, steps + 1):
        x, y, vx, vy = step(x, y, vx, vy, dt)
        err = abs((energy(x, y, vx, vy) - e0) / e0)
        if err > max_err:
            max_err = err
        if i % every == 0:
            trace.append({"t": i * dt, "energy": energy(x, y, vx, vy)})
    e1 = energy(x, y, vx, vy)
    l1 = angular_momentum(x, y, vx, vy)
    return {
        "method": method,
        "eccentricity": e,
        "orbits": orbits,
        "steps_per_orbit": steps_per_orbit,
        "dt": dt,
        "steps": steps,
        "initial_energy": e0,
        "final_energy": e1,
        "exact_energy": -GM / (2.0 * A),
        "max_rel_energy_error": max_err,
        "final_rel_energy_error": abs((e1 - e0) / e0),
        "final_rel_angular_momentum_error": abs((l1 - l0) / l0),
        "energy_samples": trace,
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--method", choices=sorted(STEPPERS), required=True)
    p.add_argument("--e", type=float, default=0.5, help="eccentricity, 0 <= e < 1")
    p.add_argument("--orbits", type=float, default=10.0)
    p.add_argument("--steps-per-orbit", type=int, default=1000)
    p.add_argument("--samples", type=int, default=20, help="energy samples kept")
    p.add_argument("--out", default="result.json")
    args = p.parse_args(argv)
    if not 0.0 <= args.e < 1.0:
        p.error("--e must satisfy 0 <= e < 1")
    if args.orbits <= 0 or args.steps_per_orbit <= 0 or args.samples <= 0:
        p.error("--orbits, --steps-per-orbit and --samples must be positive")
    start = time.perf_counter()
    result = integrate(args.method, args.e, args.orbits, args.steps_per_orbit, args.samples)
    result["compute_seconds"] = round(time.perf_counter() - start, 4)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print("%s e=%g orbits=%g steps/orbit=%d: max |dE/E0| = %.6g, final |dE/E0| = %.6g (%.3f s)" % (
        args.method, args.e, args.orbits, args.steps_per_orbit,
        result["max_rel_energy_error"], result["final_rel_energy_error"],
        result["compute_seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
