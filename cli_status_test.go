package main

import (
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestStatusTextIsBounded: text status lists the experiments it was given
// (the newest) and, when the study has more, one line with the counts of
// all of them; a study that fits shows no such line.
func TestStatusTextIsBounded(t *testing.T) {
	exps := []engine.Receipt{{ID: "exp_98", Status: engine.ExpSucceeded}, {ID: "exp_99", Status: engine.ExpFailed}}
	cases := []struct {
		name   string
		counts map[engine.ExpStatus]int
		want   string // "" for no counts line
	}{
		{"more than shown", map[engine.ExpStatus]int{engine.ExpSucceeded: 90, engine.ExpFailed: 9, engine.ExpRunning: 1},
			"experiments 100 (1 running, 90 succeeded, 9 failed); the newest 2 (status --json lists every one):"},
		{"all shown", map[engine.ExpStatus]int{engine.ExpSucceeded: 1, engine.ExpFailed: 1}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := statusText(engine.Snapshot{Experiments: exps, ExperimentCounts: tc.counts})
			if n := strings.Count(out, "\nexp   "); n != len(exps) {
				t.Errorf("%d experiment lines, want %d:\n%s", n, len(exps), out)
			}
			if got := strings.Contains(out, "experiments "); tc.want == "" && got {
				t.Errorf("a counts line for a study that fits:\n%s", out)
			}
			if tc.want != "" && !strings.Contains(out, tc.want) {
				t.Errorf("no line %q in:\n%s", tc.want, out)
			}
		})
	}
}
