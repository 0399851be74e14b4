package scripted

import (
	"errors"
	"testing"
)

func TestParseCriterion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		texts  []string
		metric string
		want   float64
		strict bool
	}{
		{"within percent", []string{rootStatement}, DefaultMetric, 0.01, false},
		{"within percent no space", []string{"energy drifts within 2.5% over a run"}, DefaultMetric, 0.025, false},
		{"explicit comparison", []string{"max_rel_energy_error <= 0.01"}, DefaultMetric, 0.01, false},
		{"strict comparison with field", []string{"final_rel_energy_error < 1e-3"}, "final_rel_energy_error", 0.001, true},
		{"unicode comparison", []string{"error ≤ 0.5 %"}, DefaultMetric, 0.005, false},
		{"words percent", []string{"stays below 3 percent"}, DefaultMetric, 0.03, true},
		{"bare percentage", []string{"a 1 per cent energy budget"}, DefaultMetric, 0.01, false},
		{"empty acceptance falls through", []string{"", rootStatement}, DefaultMetric, 0.01, false},
		{"acceptance wins", []string{"max_rel_energy_error <= 0.02", rootStatement}, DefaultMetric, 0.02, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ParseCriterion(tc.texts...)
			if err != nil {
				t.Fatalf("ParseCriterion: %v", err)
			}
			if c.Metric != tc.metric || !sameNum(c.Threshold, tc.want) || c.Strict != tc.strict {
				t.Fatalf("got %+v, want %s %v strict=%v", c, tc.metric, tc.want, tc.strict)
			}
		})
	}
}

func TestParseCriterionNone(t *testing.T) {
	t.Parallel()
	_, err := ParseCriterion("Euler conserves energy at e = 0.5 over 10 orbits", "")
	if !errors.Is(err, ErrNoThreshold) {
		t.Fatalf("err = %v, want ErrNoThreshold", err)
	}
}

func TestStatedCase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		statement string
		ancestors []string
		methods   []string
		e, orbits float64
		steps     float64
	}{
		{"root", rootStatement, nil, []string{"euler"}, 0.5, 10, 1000},
		{"repair inherits parameters", "Leapfrog conserves the energy of the same orbit to within 1 %.",
			[]string{rootStatement}, []string{"leapfrog"}, 0.5, 10, 1000},
		{"repair statement", repairStatement, nil, []string{"leapfrog"}, 0.5, 10, 1000},
		{"eccentricity words", "velocity Verlet with eccentricity 0.9 over 100 orbits and 500 steps per orbit",
			nil, []string{"leapfrog"}, 0.9, 100, 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := statedCase(tc.statement, tc.ancestors...)
			if len(c.Methods) != len(tc.methods) || (len(tc.methods) > 0 && c.Methods[0] != tc.methods[0]) {
				t.Fatalf("methods = %v, want %v", c.Methods, tc.methods)
			}
			for _, p := range []struct {
				name string
				got  *float64
				want float64
			}{{"e", c.E, tc.e}, {"orbits", c.Orbits, tc.orbits}, {"steps", c.StepsPerOrbit, tc.steps}} {
				if p.got == nil || !sameNum(*p.got, p.want) {
					t.Fatalf("%s = %v, want %v", p.name, p.got, p.want)
				}
			}
		})
	}
}
