package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tickLine is a line of testdata/tui_ticker.sh's experiment.
var tickLine = regexp.MustCompile(`tick (\d+) t=(\d+\.\d+)`)

// newestTick is the highest tick on screen and the time it was printed.
func newestTick(scr string) (int, time.Time) {
	n, at := 0, time.Time{}
	for _, m := range tickLine.FindAllStringSubmatch(scr, -1) {
		k, _ := strconv.Atoi(m[1])
		if k > n {
			sec, _ := strconv.ParseFloat(m[2], 64)
			n, at = k, time.UnixMilli(int64(sec*1000))
		}
	}
	return n, at
}

// ticksInFile is the number of ticks the experiment has written so far.
func ticksInFile(dir string) int {
	matches, _ := filepath.Glob(filepath.Join(dir, "supervisor", "run", "exp_*", "stdout.log"))
	n := 0
	for _, p := range matches {
		b, _ := os.ReadFile(p)
		n = max(n, strings.Count(string(b), "tick "))
	}
	return n
}

// TestTUILiveOutputFollowsARunningExperiment opens the log viewer on an
// experiment that prints a line a second: each new line reaches the screen
// within 2 s of being printed, f stops following (new lines stay off
// screen) and f again shows the newest line.
func TestTUILiveOutputFollowsARunningExperiment(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "tui")
	reapMarker(t, c.marker)
	agentPath := filepath.Join(t.TempDir(), "agent.sh")
	copyExec(t, filepath.Join("testdata", "tui_ticker.sh"), agentPath)
	sup := start(t, "study", "--campaign", c.dir, "--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "command", "--executable", agentPath, "--execution-backend", "bubblewrap",
		"--wall-seconds", "300", "--turn-seconds", "60", "--batch")
	waitFor(t, 30*time.Second, "the ticker's first line", func() bool { return ticksInFile(c.dir) >= 1 })
	s := tuiScreen(t, tuiEnv(), bin, "tui", "--campaign", c.dir)
	s.waitText(10*time.Second, "RUNNING", "ticker.py")
	s.keys("Tab", "Enter")
	s.waitText(5*time.Second, "Output of exp_", "running · live", "[following]")

	// Every new tick that reaches the screen: how long after it was printed.
	var lags []time.Duration
	seen, _ := newestTick(s.capture())
	deadline := time.Now().Add(15 * time.Second)
	for len(lags) < 5 && time.Now().Before(deadline) {
		n, at := newestTick(s.capture())
		if n > seen {
			seen = n
			lags = append(lags, time.Since(at))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(lags) < 5 {
		t.Fatalf("only %d new lines reached the viewer in 15 s; the screen:\n%s", len(lags), s.capture())
	}
	worst := time.Duration(0)
	for _, l := range lags {
		worst = max(worst, l)
	}
	t.Logf("lag from print to screen over %d lines: %v (worst %v)", len(lags), lags, worst)
	if worst > 2*time.Second {
		t.Fatalf("a line took %v to reach the viewer, over 2 s", worst)
	}

	s.keys("f")
	scr := s.waitText(5*time.Second, "[paused]")
	held, _ := newestTick(scr)
	inFile := ticksInFile(c.dir)
	// Two more lines in the file: at least a second, several 300 ms polls
	// in which the viewer must not move.
	waitFor(t, 10*time.Second, "two more ticks in the log", func() bool { return ticksInFile(c.dir) >= inFile+2 })
	if n, _ := newestTick(s.capture()); n != held {
		t.Fatalf("with following stopped the newest line moved from tick %d to tick %d:\n%s", held, n, s.capture())
	}
	s.keys("f")
	s.waitFor(5*time.Second, "the newest line after f", func(scr string) bool {
		n, _ := newestTick(scr)
		return strings.Contains(scr, "[following]") && n >= inFile+2
	})
	s.keys("Escape")
	s.waitText(5*time.Second, "Experiments", "Activity")
	if r := sj(t, "", "cancel", "--campaign", c.dir); r.code != 0 {
		t.Fatalf("cancel: %s", r)
	}
	sup.wait(t, 20*time.Second)
	s.keys("q")
	s.waitExit(5 * time.Second)
}
