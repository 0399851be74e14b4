package benchtask

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The metrics of kepler-energy, as a reducer returns them.
const (
	MetricEnergy  = "max_rel_energy_error"
	MetricAngular = "final_rel_angular_momentum_error"
)

// keplerReference computes the expected metrics of one orbit.csv in Go,
// from the numbers as written: E = (vx²+vy²)/2 − 1/√(x²+y²) and
// L = x·vy − y·vx relative to the first row; the largest |E−E₀|/|E₀| over
// all rows and |L_last−L₀|/|L₀|.
func keplerReference(csv []byte) (map[string]float64, error) {
	rows, err := parseOrbit(csv)
	if err != nil {
		return nil, err
	}
	e0, l0 := energy(rows[0]), angular(rows[0])
	if e0 == 0 || l0 == 0 {
		return nil, errors.New("orbit.csv: the first row has zero energy or angular momentum")
	}
	worst := 0.0
	for _, r := range rows {
		worst = math.Max(worst, math.Abs(energy(r)-e0)/math.Abs(e0))
	}
	last := rows[len(rows)-1]
	return map[string]float64{
		MetricEnergy:  worst,
		MetricAngular: math.Abs(angular(last)-l0) / math.Abs(l0),
	}, nil
}

func energy(r state) float64 {
	return float64(float64(r[2]*r[2])+float64(r[3]*r[3]))/2 - 1/math.Sqrt(float64(r[0]*r[0])+float64(r[1]*r[1]))
}

func angular(r state) float64 { return float64(r[0]*r[3]) - float64(r[1]*r[2]) }

// parseOrbit reads orbit.csv: the header t,x,y,vx,vy and at least one row
// of five finite numbers.
func parseOrbit(csv []byte) ([]state, error) {
	lines := strings.Split(strings.TrimRight(string(bytes.ReplaceAll(csv, []byte("\r\n"), []byte("\n"))), "\n"), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "t,x,y,vx,vy" {
		return nil, errors.New("orbit.csv: want the header t,x,y,vx,vy and at least one row")
	}
	rows := make([]state, 0, len(lines)-1)
	for i, line := range lines[1:] {
		fields := strings.Split(line, ",")
		if len(fields) != 5 {
			return nil, fmt.Errorf("orbit.csv row %d: want 5 fields, got %d", i+1, len(fields))
		}
		var r state
		for j, f := range fields[1:] {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("orbit.csv row %d: %q is not a finite number", i+1, f)
			}
			r[j] = v
		}
		rows = append(rows, r)
	}
	return rows, nil
}
