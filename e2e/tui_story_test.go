package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTUIDemoTellsItsStory opens the finished demo at 200×60: the claims
// carry their experiment counts and verdicts, enter on a review shows the
// values its experiments measured, and Activity, read as sentences, pages
// back to the study's first event.
func TestTUIDemoTellsItsStory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	if r := sj(t, "", "demo", dir, "--batch"); r.code != 0 {
		t.Fatalf("demo --batch: %s", r)
	}
	s := tuiScreenSized(t, 200, 60, tuiEnv(), bin, "tui", "--campaign", dir)
	s.waitText(10*time.Second, "COMPLETED", "falsified (approved)", "supported (approved)", " exp ", "CLAIM", "PURPOSE",
		"study completed", "turn 4 started")
	s.keys("Tab", "Tab", "Tab") // Claims → Experiments → Processes → Reviews
	s.waitText(5*time.Second, "▶ Reviews")
	s.keys("Enter")
	scr := s.waitText(10*time.Second, "Measured (", "max_rel_energy_error = ", "rationale")
	if strings.Contains(scr, "could not read them") {
		t.Fatalf("the review's evidence did not load:\n%s", scr)
	}
	s.keys("Escape") // alone: ESC and tab in one read are alt+tab
	s.waitGone(5*time.Second, "Measured (")
	s.keys("Tab")
	s.waitText(5*time.Second, "▶ Activity")
	for range 20 {
		s.keys("j", "j", "j", "j", "j", "j", "j", "j", "j", "j")
	}
	s.waitText(10*time.Second, "study created (scripted", "review of root: approved, falsified")
	s.keys("q")
	s.waitExit(5 * time.Second)
}
