package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// purposesOf maps each experiment's short id (as the dashboard shows it)
// to its purpose, from `status --json`.
func purposesOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	r := sj(t, "", "status", "--campaign", dir, "--json")
	var s struct {
		Experiments []struct{ ID, Purpose, Status string } `json:"experiments"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("status --json: %v: %s", err, r)
	}
	out := map[string]string{}
	for _, e := range s.Experiments {
		out[e.ID[:min(12, len(e.ID))]] = e.Purpose
	}
	return out
}

// TestTUIFilterNarrowsFortyExperiments: `/case-3` narrows a study of 40
// experiments to case-3 and case-30 … case-39, and says 11 of 40; esc
// gives all 40 back.
func TestTUIFilterNarrowsFortyExperiments(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "tui")
	reapMarker(t, c.marker)
	agentPath := filepath.Join(t.TempDir(), "agent.sh")
	copyExec(t, filepath.Join("testdata", "tui_many_agent.sh"), agentPath)
	sup := start(t, "study", "--campaign", c.dir, "--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "command", "--executable", agentPath, "--execution-backend", "bubblewrap",
		"--wall-seconds", "600", "--turn-seconds", "120", "--batch")
	waitFor(t, 90*time.Second, "40 finished experiments", func() bool {
		snap, err := tryStatus(t, c.dir)
		return err == nil && len(snap.withStatus("succeeded")) == 40
	})
	if r := sj(t, "", "cancel", "--campaign", c.dir); r.code != 0 {
		t.Fatalf("cancel: %s", r)
	}
	sup.wait(t, 30*time.Second)
	purpose := purposesOf(t, c.dir)

	s := tuiScreenSized(t, 120, 60, tuiEnv(), bin, "tui", "--campaign", c.dir)
	s.waitText(10*time.Second, "Experiments (40)")
	s.keys("Tab")
	s.waitText(10*time.Second, "▶ Experiments") // the focus moved before the prompt opens on it
	s.keys("/")
	s.waitText(10*time.Second, "/▏")
	s.typeText("case-3")
	scr := s.waitText(20*time.Second, "/case-3▏ · 11 of 40")
	var shown []string
	for _, l := range lines(scr) {
		f := strings.Fields(strings.TrimLeft(l, "› "))
		if len(f) > 0 && strings.HasPrefix(f[0], "exp_") && purpose[f[0]] != "" {
			shown = append(shown, purpose[f[0]])
		}
	}
	want := map[string]bool{"case-3": true}
	for i := 30; i < 40; i++ {
		want[fmt.Sprintf("case-%d", i)] = true
	}
	if len(shown) != len(want) {
		t.Fatalf("the filtered pane shows %d experiments %v, want the 11 of case-3 and case-30…39:\n%s", len(shown), shown, scr)
	}
	for _, p := range shown {
		if !want[p] {
			t.Errorf("the filter case-3 shows %s:\n%s", p, scr)
		}
	}
	s.keys("Enter")
	s.waitText(5*time.Second, "/case-3 · 11 of 40")
	s.keys("Escape")
	s.waitGone(5*time.Second, "11 of 40")
	s.keys("q")
	s.waitExit(5 * time.Second)
}
