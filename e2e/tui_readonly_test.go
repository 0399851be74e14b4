package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTUIReadOnlyFinishedStudyAsAPersonSeesIt opens a finished demo in
// tmux as a person would, read-only: home marks itself [read-only] and
// offers no start keys, `?` opens home's key overlay, the dashboard's
// footer offers no pause, resume, cancel or warning key, a finished study
// counts no time down, and an experiment's detail (17 lines, on 14
// rows) pages with G and g, saying where it is.
func TestTUIReadOnlyFinishedStudyAsAPersonSeesIt(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	dir := filepath.Join(ws, "demo")
	if r := sj(t, "", "demo", dir, "--batch"); r.code != 0 {
		t.Fatalf("demo --batch: %s", r)
	}
	env := append(tuiEnv(), "SIMJECTURE_WORKSPACE="+ws)
	s := tuiScreenSized(t, 120, 14, env, bin, "tui", "--read-only")
	scr := s.waitText(10*time.Second, "[read-only]", "demo", "completed")
	for _, dead := range []string{"n new study", "d demo"} {
		if strings.Contains(scr, dead) {
			t.Errorf("read-only home offers %q:\n%s", dead, scr)
		}
	}
	s.keys("?")
	s.waitText(5*time.Second, "Keys: home")
	s.keys("Escape")
	s.waitGone(5*time.Second, "Keys: home")
	s.keys("Enter")
	scr = s.waitText(10*time.Second, "COMPLETED", "Experiments", "read-only", "q quit")
	footer := lastLine(scr)
	for _, dead := range []string{"p pause", "r resume", "c cancel", "w warning"} {
		if strings.Contains(footer, dead) {
			t.Errorf("the footer of a finished read-only Bubblewrap study offers %q: %q", dead, footer)
		}
	}
	if strings.Contains(scr, " left") {
		t.Errorf("a finished study still counts its deadline down:\n%s", scr)
	}
	s.keys("Tab", "Enter")                // Claims → Experiments, open the first
	s.waitText(5*time.Second, "lines 1–") // the detail says where it is
	s.keys("G")
	end := s.waitFor(5*time.Second, "the detail's position at its end", func(sc string) bool {
		return strings.Contains(sc, "lines ") && strings.Contains(sc, "100%")
	})
	s.keys("g")
	s.waitFor(5*time.Second, "the detail's position back at its top", func(sc string) bool {
		return strings.Contains(sc, "lines 1–") && sc != end
	})
	s.keys("Escape") // close the detail (alone: ESC and q in one read are alt+q)
	s.waitGone(5*time.Second, "lines 1–")
	s.keys("q") // back home
	s.waitText(5*time.Second, "[read-only]")
	s.keys("q")
	s.waitExit(5 * time.Second)
}

func lastLine(scr string) string {
	lines := strings.Split(strings.TrimRight(scr, "\n "), "\n")
	return lines[len(lines)-1]
}
