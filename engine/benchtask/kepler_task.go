package benchtask

import (
	"fmt"
	"math/rand/v2"
)

// orbitFile is the one input file of a kepler-energy case.
const orbitFile = "orbit.csv"

var keplerTask = Task{
	ID:               "kepler-energy",
	Title:            "Energy and angular-momentum drift of sampled Kepler orbits",
	SuggestedSeconds: 600,
	Contract:         keplerContract,
	Metrics:          []string{MetricEnergy, MetricAngular},
	Given:            keplerGiven,
	Holdouts:         keplerHoldouts,
}

// keplerGivenParams are the cases prepare writes under raw/.
var keplerGivenParams = []struct {
	name string
	p    orbitParams
}{
	{"mild", orbitParams{Eccentricity: 0.1, Angle: 0, Orbits: 3, Samples: 121, Stride: 2}},
	{"eccentric", orbitParams{Eccentricity: 0.5, Angle: 0.7, Orbits: 2, Samples: 201, Stride: 1}},
	{"sharp", orbitParams{Eccentricity: 0.7, Angle: 2.1, Orbits: 2, Samples: 91, Stride: 3}},
}

func keplerGiven() ([]Case, error) {
	out := make([]Case, 0, len(keplerGivenParams))
	for _, g := range keplerGivenParams {
		c, err := keplerCase(g.name, g.p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func keplerCase(name string, p orbitParams) (Case, error) {
	csv := orbitCSV(p)
	want, err := keplerReference(csv)
	if err != nil {
		return Case{}, fmt.Errorf("case %s: %w", name, err)
	}
	return Case{Name: name, Files: map[string][]byte{orbitFile: csv}, Expected: want}, nil
}

// Holdout drift bounds: both metrics must lie in [minDrift, maxDrift], so
// a reducer returning zeros never passes within atol and no orbit is
// degenerate.
const (
	minDrift      = 1e-6
	maxDrift      = 0.1
	holdoutTrials = 256
)

// keplerHoldouts draws count orbits from seed: eccentricity 0.1–0.7, any
// orientation, 41–301 samples, 1–4 steps between samples and 40–120 steps
// per period, redrawn until both drifts lie within the bounds.
func keplerHoldouts(seed uint64, count int) ([]Case, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]Case, 0, count)
	for tries := 0; len(out) < count; tries++ {
		if tries == holdoutTrials {
			return nil, fmt.Errorf("no holdout orbit within the drift bounds after %d draws", tries)
		}
		p := orbitParams{Eccentricity: 0.1 + 0.6*rng.Float64(), Angle: 2 * 3.141592653589793 * rng.Float64(),
			Samples: 41 + rng.IntN(261), Stride: 1 + rng.IntN(4)}
		p.Orbits = float64(p.steps()) / float64(40+rng.IntN(81))
		c, err := keplerCase(fmt.Sprintf("holdout-%d", len(out)), p)
		if err != nil || !withinDrift(c.Expected) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

func withinDrift(m map[string]float64) bool {
	for _, v := range m {
		if v < minDrift || v > maxDrift {
			return false
		}
	}
	return true
}

const keplerContract = `# Task kepler-energy

Measure how well a fixed-step integrator conserved the invariants of sampled
planar Kepler orbits.

## Inputs

Each folder ` + "`raw/<case>/`" + ` holds ` + "`orbit.csv`" + `: a sampled trajectory of a planar
Kepler orbit in units GM = 1, with the header ` + "`t,x,y,vx,vy`" + ` and one row per
sample (time, position, velocity). Do not change anything under ` + "`raw/`" + `.

## What to compute, per case

With the specific orbital energy and angular momentum of each row

    E = (vx² + vy²)/2 − 1/√(x² + y²)
    L = x·vy − y·vx

and E₀, L₀ those of the first row:

- ` + "`max_rel_energy_error`" + `: the maximum of |E − E₀| / |E₀| over all rows;
- ` + "`final_rel_angular_momentum_error`" + `: |L_last − L₀| / |L₀|, L_last of the last row.

Use double precision throughout.

## What to deliver, in this folder

1. ` + "`reduce.py`" + ` defining ` + "`reduce_case(case_dir) -> dict`" + `, which reads
   ` + "`<case_dir>/orbit.csv`" + ` and returns
   ` + "`{\"max_rel_energy_error\": float, \"final_rel_angular_momentum_error\": float}`" + `.
   It may use the Python standard library only and must read nothing but
   its own case folder.
2. ` + "`result.json`" + `: ` + "`{\"cases\": {\"<case>\": {...}}}`" + ` with your results for every case
   under ` + "`raw/`" + `.
3. ` + "`FINDINGS.md`" + `: a short, non-empty account of what you found.

## How it is graded

` + "`simjecture bench grade kepler-energy --submission DIR --output FILE`" + ` runs
reduce.py in the sandbox (no network, a clean environment, a timeout), once per
case, on the given cases and on three fresh holdout orbits it has never shown
anyone (new eccentricity, step count and sample count at every grading). A
trusted reference computes the expected values without importing your code.
Numbers match when |actual − expected| ≤ 1e-8 + 1e-7·|expected|; a missing
key fails. result.json must match the reference on the given cases. The
submission passes when the inputs are intact, FINDINGS.md is present and
every check passes.
`
