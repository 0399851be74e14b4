package scripted

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestKeplerScience runs the embedded kepler.py for the demo's cases and
// checks the science the demo rests on.
func TestKeplerScience(t *testing.T) {
	t.Parallel()
	needPython(t)
	dir := t.TempDir()
	src := filepath.Join(dir, SourceName)
	if err := os.WriteFile(src, KeplerSource(), 0o644); err != nil {
		t.Fatal(err)
	}
	stated := demoCase(DemoHypothesis())
	tests := []struct {
		name    string
		spec    runSpec
		exceeds bool
	}{
		{"euler breaks 1 percent", rootPlan(stated).Evidence, true},
		{"leapfrog keeps 1 percent", repairPlan("c", stated).Evidence, false},
		{"leapfrog challenge keeps 1 percent", repairPlan("c", stated).Challenge, false},
	}
	crit, err := ParseCriterion(DemoHypothesis())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), tc.spec.Out)
			args := append([]string{src}, tc.spec.args()...)
			args[len(args)-1] = out
			if msg, err := exec.Command(python, args...).CombinedOutput(); err != nil {
				t.Fatalf("kepler.py: %v\n%s", err, msg)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var res map[string]any
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"method", "eccentricity", "orbits", "steps_per_orbit", "dt", "steps",
				"initial_energy", "final_energy", "max_rel_energy_error", "final_rel_energy_error"} {
				if _, ok := res[k]; !ok {
					t.Fatalf("result lacks %s", k)
				}
			}
			v := res["max_rel_energy_error"].(float64)
			t.Logf("%s: max_rel_energy_error = %g", tc.spec.describe(), v)
			if got := !crit.Satisfied(v); got != tc.exceeds {
				t.Fatalf("max_rel_energy_error = %g, exceeds %v = %v, want %v", v, crit.Threshold, got, tc.exceeds)
			}
		})
	}
}

func TestKeplerRejectsBadArguments(t *testing.T) {
	t.Parallel()
	needPython(t)
	src := filepath.Join(t.TempDir(), SourceName)
	if err := os.WriteFile(src, KeplerSource(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--method", "rk4"}, {"--method", "euler", "--e", "1.0"}, {"--method", "euler", "--orbits", "0"}} {
		cmd := exec.Command(python, append([]string{src, "--out", filepath.Join(t.TempDir(), "r.json")}, args...)...)
		if err := cmd.Run(); err == nil {
			t.Fatalf("kepler.py %v succeeded", args)
		}
	}
}
