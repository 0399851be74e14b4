package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTUISteerReachesTheNextWorkerPrompt: on the dashboard of a paused
// study, s opens the steering overlay; the message typed there is queued
// through the engine, r resumes the study, and the next worker prompt
// carries it; once the study has ended the footer offers `s guidance
// (read)` and the overlay shows it delivered and takes no more guidance.
func TestTUISteerReachesTheNextWorkerPrompt(t *testing.T) {
	t.Parallel()
	c := pausedInTurn1(t)
	const text = "Prefer exact integer arithmetic, sent from the dashboard."
	s := tuiScreen(t, tuiEnv(), bin, "tui", "--campaign", c.dir)
	s.waitText(10*time.Second, "PAUSED", "s guidance")
	s.keys("s")
	s.waitText(5*time.Second, "Operator guidance", "no guidance yet", "enter send")
	s.typeText(text)
	s.keys("Enter")
	s.waitText(10*time.Second, "queued steer_", "queued                 "+text[:30])
	msgs := steeringOf(t, c.dir)
	if len(msgs) != 1 || msgs[0].Text != text || msgs[0].DeliveredAt != nil {
		t.Fatalf("status --json steering = %+v; want the one message, undelivered", msgs)
	}
	s.keys("Escape")
	s.waitGone(5*time.Second, "Operator guidance")
	s.keys("r")
	s.waitText(60*time.Second, "COMPLETED")
	checkPromptCarries(t, c.dir, msgs[0].ID, text)
	s.waitText(10*time.Second, "s guidance (read)") // ended: s only lists the messages
	s.keys("s")
	s.waitText(5*time.Second, "Operator guidance", "delivered at", "the study has ended: guidance cannot be sent")
	s.typeText("one more idea")
	s.keys("Enter")

	if n := len(steeringOf(t, c.dir)); n != 1 {
		t.Errorf("guidance refused after the end was stored: %d messages", n)
	}
	s.keys("Escape") // alone: an escape followed at once by q reads as alt+q
	s.waitGone(5*time.Second, "Operator guidance")
	s.keys("q")
	s.waitExit(10 * time.Second)
}

// TestTUIContinuesAFinishedStudy: C on the dashboard of a completed study
// opens the new-study form as its continuation, with the parent's files
// to pick (the hidden one refused); the child created from it inherits the
// picked file and runs to completion under this process.
func TestTUIContinuesAFinishedStudy(t *testing.T) {
	t.Parallel()
	parent := newCampaign(t, "cubes", "e2e-n: 40", "e2e-challenge-n: 400")
	if r := sj(t, "", parent.args(120, 30)...); r.code != 0 || status(t, parent.dir).Status != "completed" {
		t.Fatalf("the parent: want a completed study, got %s", r)
	}
	writeFile(t, filepath.Join(parent.dir, "research", "notes.md"), "# what the parent learnt\n")
	writeFile(t, filepath.Join(parent.dir, "research", ".secret"), "hidden\n")
	next := newCampaign(t, "cubes", "e2e-n: 40", "e2e-challenge-n: 400")
	ws := filepath.Join(t.TempDir(), "studies")

	s := tuiScreen(t, tuiEnv(), "env", "SIMJECTURE_WORKSPACE="+ws, bin, "tui", "--campaign", parent.dir)
	s.waitText(10*time.Second, "COMPLETED", "C continue")
	s.keys("C")
	s.waitText(10*time.Second, "continuation phase", "Continue from", "notes.md  25B", "refused .secret: is hidden")
	for range pickerIndex(t, filepath.Join(parent.dir, "research"), "notes.md") {
		s.keys("Down")
	}
	s.waitText(5*time.Second, "› [ ] notes.md")
	s.keys("Space")
	s.waitText(5*time.Second, "› [x] notes.md", "1 of")
	s.keys("Tab", "Tab", "Tab", "Tab") // picker → hypothesis → its file → instructions → its file
	s.typeText(next.instructions)
	s.keys("C-s")
	s.waitText(10*time.Second, "Review the frozen contract", "Continues", "[notes.md]", "the parent's (not revised)")
	s.keys("Enter")
	s.waitText(20*time.Second, "supervising")
	s.waitText(60*time.Second, "COMPLETED")
	entries, err := os.ReadDir(ws)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one study under %s, found %v (%v)", ws, entries, err)
	}
	child := filepath.Join(ws, entries[0].Name())
	for _, rel := range []string{"research/inherited/notes.md", "operator/continuation/files/notes.md", "operator/continuation/summary.json"} {
		if _, err := os.Stat(filepath.Join(child, rel)); err != nil {
			t.Errorf("the child lacks %s: %v", rel, err)
		}
	}
	if _, err := os.Stat(filepath.Join(child, "research", "inherited", ".secret")); err == nil {
		t.Error("the child inherited the hidden file")
	}
	if snap := status(t, child); snap.Status != "completed" {
		t.Errorf("the child is %q, want completed", snap.Status)
	}
	s.keys("q")
	s.waitExit(10 * time.Second)
}

// pickerIndex is the place of rel among the files the continue form's
// picker offers from research (walk order, hidden entries left out).
func pickerIndex(t *testing.T, research, rel string) int {
	t.Helper()
	i, found := 0, false
	err := filepath.WalkDir(research, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case strings.HasPrefix(d.Name(), ".") && p != research && d.IsDir():
			return filepath.SkipDir
		case found || d.IsDir() || strings.HasPrefix(d.Name(), "."):
			return nil
		}
		if r, _ := filepath.Rel(research, p); r == rel {
			found = true
		} else {
			i++
		}
		return nil
	})
	if err != nil || !found {
		t.Fatalf("%s is not in %s (%v)", rel, research, err)
	}
	return i
}
