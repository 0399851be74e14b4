package benchtask

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestOrbitIsAKeplerOrbit: the integrator starts at pericentre with the
// vis-viva speed, and after whole periods it is back near its start (RK4's
// phase error is small at these step sizes), with t stepping uniformly.
func TestOrbitIsAKeplerOrbit(t *testing.T) {
	t.Parallel()
	cases := []orbitParams{
		{Eccentricity: 0, Angle: 0, Orbits: 1, Samples: 401, Stride: 5},
		{Eccentricity: 0.5, Angle: 1, Orbits: 2, Samples: 401, Stride: 5},
	}
	for _, p := range cases {
		rows, err := parseOrbit(orbitCSV(p))
		if err != nil || len(rows) != p.Samples {
			t.Fatalf("%+v: %v, %d rows", p, err, len(rows))
		}
		r0, rl := rows[0], rows[len(rows)-1]
		if d := math.Hypot(r0[0], r0[1]); math.Abs(d-(1-p.Eccentricity)) > 1e-15 {
			t.Errorf("%+v: starts at distance %v, want the pericentre %v", p, d, 1-p.Eccentricity)
		}
		if e := energy(r0); math.Abs(e+0.5) > 1e-14 { // E = −GM/(2a) = −1/2
			t.Errorf("%+v: initial energy %v, want -0.5", p, e)
		}
		if d := math.Hypot(rl[0]-r0[0], rl[1]-r0[1]); d > 1e-3 {
			t.Errorf("%+v: after %v periods it is %v away from its start", p, p.Orbits, d)
		}
	}
}

// TestReferenceFollowsTheDefinition: on a small hand-made orbit.csv the
// reference gives the values worked out by hand.
func TestReferenceFollowsTheDefinition(t *testing.T) {
	t.Parallel()
	// Row 1: r = 1, v = (0, 1): E₀ = 1/2 − 1 = −1/2, L₀ = 1.
	// Row 2: r = 2, v = (0, 0.5): E = 1/8 − 1/2 = −3/8, L = 1.
	// Row 3: r = (0, 1), v = (−1.1, 0): E = 0.605 − 1 = −0.395, L = 1.1.
	csv := "t,x,y,vx,vy\n0,1,0,0,1\n1,2,0,0,0.5\n2,0,1,-1.1,0\n"
	got, err := keplerReference([]byte(csv))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{MetricEnergy: 0.25, MetricAngular: 0.1} // |−3/8+1/2|/(1/2); |1.1−1|/1
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-15 {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	for _, bad := range []string{"", "x,y\n1,2\n", "t,x,y,vx,vy\n", "t,x,y,vx,vy\n0,1,0,0\n", "t,x,y,vx,vy\n0,1,0,zero,1\n"} {
		if _, err := keplerReference([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestHoldoutsAreFreshPerSeed: one seed gives the same holdouts, another
// seed other orbits (other sample counts or bytes), all within the drift
// bounds that keep zeros from passing.
func TestHoldoutsAreFreshPerSeed(t *testing.T) {
	t.Parallel()
	a, _ := keplerHoldouts(1, HoldoutCount)
	again, _ := keplerHoldouts(1, HoldoutCount)
	b, _ := keplerHoldouts(2, HoldoutCount)
	given, _ := keplerGiven()
	for i := range a {
		if !bytes.Equal(a[i].Files[orbitFile], again[i].Files[orbitFile]) {
			t.Errorf("holdout %d differs for the same seed", i)
		}
		if bytes.Equal(a[i].Files[orbitFile], b[i].Files[orbitFile]) {
			t.Errorf("holdout %d is the same for seeds 1 and 2", i)
		}
		for _, g := range given {
			if bytes.Equal(a[i].Files[orbitFile], g.Files[orbitFile]) {
				t.Errorf("holdout %d is the given case %s", i, g.Name)
			}
		}
		for m, v := range a[i].Expected {
			if v < ATol*100 || v > maxDrift {
				t.Errorf("holdout %d: %s = %v outside the bounds", i, m, v)
			}
		}
	}
}

// TestToleranceRule: rtol 1e-7, atol 1e-8; only finite JSON numbers count.
func TestToleranceRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw      string
		expected float64
		ok       bool
	}{
		{"1e-3", 1e-3, true},
		{"1.00000009e-3", 1e-3, true}, // 9e-11 off, bound 1.01e-8
		{"1.00002e-3", 1e-3, false},   // 2e-8 off
		{"0", 5e-9, true},             // within atol
		{"0", 2e-8, false},            // beyond atol
		{"1.0000001", 1, true},        // exactly 1e-7 off: on the bound (1.1e-7)
		{"1.0000003", 1, false},
		{`"1e-3"`, 1e-3, false},
		{"true", 1, false},
		{"null", 0, false},
		{`[1e-3]`, 1e-3, false},
	}
	for _, c := range cases {
		if got := matches(json.RawMessage(c.raw), c.expected); got != c.ok {
			t.Errorf("matches(%s, %v) = %v, want %v", c.raw, c.expected, got, c.ok)
		}
	}
	got := caseChecks("c:", []string{MetricEnergy, MetricAngular}, map[string]json.RawMessage{MetricEnergy: json.RawMessage("1")},
		map[string]float64{MetricEnergy: 1, MetricAngular: 1})
	if len(got) != 2 || !got[0].Passed || got[1].Passed || got[1].Metric != "c:"+MetricAngular {
		t.Errorf("a missing key must fail its named check: %+v", got)
	}
}

// TestHoldoutStderrIsMasked: a holdout's stderr keeps its words and line
// numbers but not its numbers; a given case's stderr is kept as is.
func TestHoldoutStderrIsMasked(t *testing.T) {
	t.Parallel()
	s := "File \"reduce.py\", line 12\nValueError: bad row 0.8848247857324184,-1.5e-3,3E+2,.5"
	masked := stderrTail(s, true)
	for _, leak := range []string{"0.8848", "1.5e-3", "3E+2", ".5"} {
		if strings.Contains(masked, leak) {
			t.Errorf("masked tail %q still holds %q", masked, leak)
		}
	}
	if !strings.Contains(masked, "line 12") || !strings.Contains(masked, "ValueError") {
		t.Errorf("masked tail %q lost its words", masked)
	}
	if stderrTail(s, false) != ": "+strings.ReplaceAll(s, "\n", " | ") {
		t.Errorf("a given case's tail must be kept")
	}
	if long := stderrTail(strings.Repeat("x\n", 5)+strings.Repeat("y", 5000), false); len([]rune(long)) > stderrKeep+3 || strings.Contains(long, "x") {
		t.Errorf("tail of %d characters, want at most %d", len(long), stderrKeep)
	}
}
