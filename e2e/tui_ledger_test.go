package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestTUIShowsTheClaimLedger runs the structured and the frontier demo to
// the end, then opens each in the TUI at 120x36: the Claims tree shows the
// contract state and the kind and relation, the Study pane the mode and
// the last role on its claim, the Reviews pane the stages; the repair's
// detail lists its contract with its state and its counting link.
func TestTUIShowsTheClaimLedger(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ mode, role string }{
		{"structured", "falsifier on claim_"}, // the falsifier of the repair, handed off
		{"frontier", "researcher on root"},    // frontier's one researcher works from the root
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "demo")
			if r := sj(t, "", "demo", dir, "--mode", c.mode, "--batch"); r.code != 0 {
				t.Fatalf("demo --mode %s --batch: %s", c.mode, r)
			}
			s := tuiScreenSized(t, 120, 36, tuiEnv(), bin, "tui", "--campaign", dir)
			s.waitText(10*time.Second, "COMPLETED", "Claims (2)", "v1 approved · sci", "sci repairs",
				fmt.Sprintf("Mode: %s · %s", c.mode, c.role), "support · sufficient")
			s.keys("j", "Enter") // the root's child: the supported claim
			s.waitText(5*time.Second, "kind        scientific", "relation    repairs", "counterex.", "Contract v1: approved")
			s.keys("G") // the detail's end: links and reviews
			s.waitText(5*time.Second, "Links: 1/1 link count", ") counts", "support (resolved", "verdict sufficient on contract v1")
			s.keys("Escape") // alone: ESC and q in one read are alt+q (it failed so under load)
			s.waitGone(5*time.Second, "verdict sufficient on contract v1")
			s.keys("q")
			s.waitExit(5 * time.Second)
		})
	}
}

// TestTUIHomeListsBenchmarkRuns grades a prepared, honestly solved trial
// into the workspace root with the real `bench grade`, then opens the home:
// it lists the study-less grade under "Benchmark runs" with its task,
// model / agent, grade and checks.
func TestTUIHomeListsBenchmarkRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := preparedTrial(t, root)
	out := filepath.Join(root, "grade.json")
	if r := sj(t, "", "bench", "grade", "kepler-energy", "--submission", dir, "--output", out, "--model", "m-e2e", "--agent", "a-e2e"); r.code != 0 {
		t.Fatalf("bench grade: %s", r)
	}
	g := readGrade(t, out)
	checks := fmt.Sprintf("%d/%d", len(g.Checks), len(g.Checks))
	s := tuiScreenSized(t, 120, 36, append(tuiEnv(), "SIMJECTURE_WORKSPACE="+root), bin, "tui")
	s.waitText(10*time.Second, "simjecture — studies in "+root, "Benchmark runs (1)", "kepler-energy", "m-e2e / a-e2e", "passed", checks)
	s.keys("q")
	s.waitExit(5 * time.Second)
}
