package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// flat is a screen's text with its whitespace collapsed, so a message
// wrapped over several lines reads as one.
func flat(scr string) string { return strings.Join(strings.Fields(scr), " ") }

// waitFlat waits until every text is on screen, wrapped or not.
func (s *screen) waitFlat(timeout time.Duration, texts ...string) string {
	s.t.Helper()
	return s.waitFor(timeout, "wrapped text "+strings.Join(texts, " | "), func(scr string) bool {
		f := flat(scr)
		for _, x := range texts {
			if !strings.Contains(f, flat(x)) {
				return false
			}
		}
		return true
	})
}

// probeReason is the reason `doctor` gives for backend b being unavailable.
func probeReason(t *testing.T, envv []string, b string) string {
	t.Helper()
	r := sjEnv(t, envv, "doctor", "--execution-backend", b, "--json")
	var p struct {
		Available bool   `json:"available"`
		Reason    string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || p.Available || p.Reason == "" {
		t.Fatalf("doctor %s: want it unavailable with a reason (%v): %s", b, err, r)
	}
	return p.Reason
}

var timeOfDay = regexp.MustCompile(`Deadline\s+\d\d:\d\d:\d\d UTC, \w{3} \d{1,2} \w{3} if launched now`)

// TestTUIFormAndReviewRefuseWhatCannotLaunch goes through the new-study
// form at 80×24 as a person would: f1 (and ? on a choice field) opens the
// form's keys; a hypothesis
// file that does not exist is refused before the review; the review of
// an unavailable PRoot reads its probe's reason and the cooperative
// warning whole (wrapped, not cut), shows the deadline as a time of day,
// offers no `enter launch` (in the footer or the `?` overlay) and refuses
// enter; an agent executable that does not exist is refused at launch in
// the form's words (no --flag); nothing is written; esc asks before it
// throws the typed text away.
func TestTUIFormAndReviewRefuseWhatCannotLaunch(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "studies")
	envv := append(tuiEnv(), "SIMJECTURE_WORKSPACE="+ws, "SIMJECTURE_PROOT=/nonexistent/proot")
	reason := probeReason(t, envv, "proot-cooperative")
	s := tuiScreenSized(t, 80, 24, envv, bin, "tui")
	s.waitText(10*time.Second, "No studies yet", "n new study")
	s.keys("n")
	s.waitText(10*time.Second, "New study", "‹ codex ›", "PRoot · cooperative")
	s.keys("F1")
	s.waitText(5*time.Second, "Keys: new study", "any key closes this help")
	s.keys("Escape")
	s.waitGone(5*time.Second, "Keys: new study")

	s.keys("Tab") // Hypothesis → its file
	s.typeText("/nonexistent/hypothesis.txt")
	s.keys("Tab")
	s.typeText("Keep the study busy.")
	s.keys("C-s")
	scr := s.waitFlat(5*time.Second, "the hypothesis file cannot be used", "/nonexistent/hypothesis.txt: no such file or directory")
	if strings.Contains(scr, "Review the frozen contract") {
		t.Fatalf("a missing hypothesis file reached the review:\n%s", scr)
	}

	s.keys("BTab", "C-u", "BTab") // clear the file, back to the typed hypothesis
	s.typeText("Sleeping does not change the answer.")
	for range 6 { // → Executable
		s.keys("Tab")
	}
	s.typeText("/nonexistent/codex")
	for range 4 { // → Execution
		s.keys("Tab")
	}
	s.keys("Right", "Right")
	s.waitText(5*time.Second, "(•) PRoot · cooperative")
	s.keys("?") // on a choice field ? is help, not text
	s.waitText(5*time.Second, "Keys: new study")
	s.keys("Escape")
	s.waitGone(5*time.Second, "Keys: new study")
	s.keys("C-s")
	scr = s.waitFlat(5*time.Second, "Review the frozen contract", "proot-cooperative — UNAVAILABLE: "+reason,
		"Cooperative execution is not a security sandbox: no filesystem or network isolation.")
	t.Logf("the review of an unavailable backend at 80 columns:\n%s", scr)
	if !timeOfDay.MatchString(scr) {
		t.Errorf("the review does not show the deadline as a time of day:\n%s", scr)
	}
	if strings.Contains(scr, "…") {
		t.Errorf("the review cuts a value at 80 columns:\n%s", scr)
	}
	if strings.Contains(footer(scr), "launch") {
		t.Errorf("the review offers to launch an unavailable backend: %q", footer(scr))
	}
	s.keys("?")
	help := s.waitText(5*time.Second, "Keys: review")
	if strings.Contains(help, "launch") {
		t.Errorf("the review's help offers launch for an unavailable backend:\n%s", help)
	}
	s.keys("Escape")
	s.waitGone(5*time.Second, "Keys: review")
	s.keys("Enter")
	s.waitFlat(5*time.Second, "cannot launch: PRoot · cooperative ⚠ is unavailable: "+reason)

	s.keys("Escape") // back to the form, on its last field: choose Auto
	s.waitText(5*time.Second, "New study")
	s.keys("Left", "Left")
	s.waitText(5*time.Second, "(•) Auto")
	s.keys("C-s")
	s.waitText(5*time.Second, "Review the frozen contract", "enter launch")
	s.keys("Enter")
	scr = s.waitFlat(10*time.Second, "Executable: /nonexistent/codex not found")
	if strings.Contains(scr, "--") {
		t.Errorf("the launch error is worded for the command line:\n%s", scr)
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 0 {
		t.Errorf("refused launches left %d entries in %s", len(entries), ws)
	}

	s.keys("Escape")
	s.waitText(5*time.Second, "New study")
	s.keys("Escape")
	s.waitText(5*time.Second, "Throw away what you typed?")
	s.keys("y")
	s.waitText(5*time.Second, "studies in ", "No studies yet")
	s.keys("q")
	s.waitExit(5 * time.Second)
}
