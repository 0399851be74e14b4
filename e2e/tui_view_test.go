package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// replayRecord writes the bundled demo record (a finished study; nothing
// runs) into a new folder and returns it.
func replayRecord(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "replay")
	if r := sj(t, "", "demo", "--replay", dir, "--batch"); r.code != 0 {
		t.Fatalf("demo --replay --batch: %s", r)
	}
	return dir
}

// captureColour is the visible screen with its escape sequences.
func (s *screen) captureColour() string {
	out, _ := exec.Command("tmux", "-L", s.socket, "capture-pane", "-e", "-p", "-t", s.name).Output()
	return string(out)
}

var position = regexp.MustCompile(`lines (\d+)–(\d+) of (\d+)`)

// where is the detail view's position: its first and last line shown and
// how many it has.
func where(t *testing.T, scr string) (first, last, total int) {
	t.Helper()
	m := position.FindStringSubmatch(scr)
	if m == nil {
		t.Fatalf("the detail does not say where it is:\n%s", scr)
	}
	first, _ = strconv.Atoi(m[1])
	last, _ = strconv.Atoi(m[2])
	total, _ = strconv.Atoi(m[3])
	return first, last, total
}

// TestTUIDetailScrollsWithinItsBounds: an experiment's detail on a 14-row
// screen never scrolls past its end (30 × j leave a full last page);
// PgDn, space, PgUp, End, Home, G and g move it, and it always says where
// it is.
func TestTUIDetailScrollsWithinItsBounds(t *testing.T) {
	t.Parallel()
	dir := replayRecord(t)
	s := tuiScreenSized(t, 100, 14, tuiEnv(), bin, "tui", "--campaign", dir)
	s.waitText(10*time.Second, "COMPLETED", "Experiments (3)")
	s.keys("Tab", "Enter") // Claims → Experiments, open the first
	scr := s.waitText(5*time.Second, "Experiment exp_", "lines 1–")
	_, page, total := where(t, scr)
	if total <= page {
		t.Fatalf("the detail (%d lines) fits on one page (%d): nothing to scroll:\n%s", total, page, scr)
	}
	at := func(what string, ok func(first, last int) bool) string {
		return s.waitFor(5*time.Second, what, func(scr string) bool {
			m := position.FindStringSubmatch(scr)
			if m == nil {
				return false
			}
			first, _ := strconv.Atoi(m[1])
			last, _ := strconv.Atoi(m[2])
			return ok(first, last)
		})
	}
	atTop := func(first, _ int) bool { return first == 1 }
	atEnd := func(first, last int) bool { return last == total && last-first+1 == page }
	for range 30 {
		s.keys("j")
	}
	scr = at("30 × j to stop at the end, with a full page", atEnd)
	if !strings.Contains(scr, "100%") {
		t.Errorf("at its end the detail does not say 100%%:\n%s", scr)
	}
	for _, step := range []struct {
		key  string
		what string
		ok   func(first, last int) bool
	}{
		{"Home", "Home to the top", atTop},
		{"PageDown", "PgDn a page down", func(first, _ int) bool { return first > 1 }},
		{"PageUp", "PgUp back to the top", atTop},
		{"Space", "space a page down", func(first, _ int) bool { return first > 1 }},
		{"End", "End to the end", atEnd},
		{"g", "g to the top", atTop},
		{"G", "G to the end", atEnd},
		{"PageDown", "PgDn at the end stays there", atEnd},
	} {
		s.keys(step.key)
		at(step.what, step.ok)
	}
	s.keys("Escape")
	s.waitGone(5*time.Second, "lines ")
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// colourSGR is an escape sequence that sets a foreground colour.
var colourSGR = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[0-9;]+)m`)

// TestTUIStatusWordsKeepTheirTextWithoutColour: over SSH (TERM=xterm, no
// COLORTERM) a succeeded experiment is green (16 colours), a supported
// claim's ✓ green and a falsified one's × red, each with its word or
// glyph; with NO_COLOR
// the same screen has no colour at all and loses no word or glyph.
func TestTUIStatusWordsKeepTheirTextWithoutColour(t *testing.T) {
	t.Parallel()
	dir := replayRecord(t)
	base := env()
	words := []string{"succeeded", "✓", "×", "falsified (approved)", "supported (approved)"}
	green := regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:32|92)m(?:✓|succeeded)`)
	red := regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:31|91)m×`)

	// The TUI starts from an empty environment: the pane's TERM is tmux's
	// default-terminal unless the command sets it, and the host's CI (any
	// value: termenv then assumes no terminal), CLICOLOR=0, COLORTERM or
	// TERM_PROGRAM would change the colour profile.
	clean := []string{"env", "-i", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "SIMJECTURE_WORKSPACE=" + workspace, "TERM=xterm"}
	ssh := tuiScreenSized(t, 120, 36, base, append(clean, bin, "tui", "--campaign", dir)...)
	ssh.waitText(10*time.Second, words...)
	scr := ssh.waitFor(5*time.Second, "coloured status words", func(string) bool {
		c := ssh.captureColour()
		return green.MatchString(c) && red.MatchString(c)
	})
	t.Logf("TERM=xterm without COLORTERM:\n%s", scr)
	ssh.keys("q")
	ssh.waitExit(5 * time.Second)

	plain := tuiScreenSized(t, 120, 36, base, append(clean, "NO_COLOR=1", bin, "tui", "--campaign", dir)...)
	plain.waitText(10*time.Second, words...)
	if c := plain.captureColour(); colourSGR.MatchString(c) {
		t.Errorf("NO_COLOR: the screen still sets colours: %q", colourSGR.FindString(c))
	}
	plain.keys("q")
	plain.waitExit(5 * time.Second)
}
