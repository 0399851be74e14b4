package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// footer is the last non-empty line of a screen.
func footer(scr string) string {
	ls := lines(scr)
	if len(ls) == 0 {
		return ""
	}
	return ls[len(ls)-1]
}

// TestTUIFooterShowsQuitAtEveryWidth: the dashboard's footer fits at 80,
// 120 and 200 columns, always with `q quit`, and a finished study offers
// no pause, resume or cancel.
func TestTUIFooterShowsQuitAtEveryWidth(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	if r := sj(t, "", "demo", dir, "--batch"); r.code != 0 {
		t.Fatalf("demo --batch: %s", r)
	}
	for _, size := range [][2]int{{80, 24}, {120, 36}, {200, 60}} {
		s := tuiScreenSized(t, size[0], size[1], tuiEnv(), bin, "tui", "--campaign", dir)
		scr := s.waitText(10*time.Second, "COMPLETED", "q quit")
		bar := footer(scr)
		if !strings.HasSuffix(strings.TrimSpace(bar), "q quit") {
			t.Errorf("%d columns: the footer does not end with q quit: %q", size[0], bar)
		}
		for _, dead := range []string{"p pause", "r resume", "c cancel", "w warning"} {
			if strings.Contains(bar, dead) {
				t.Errorf("%d columns: a completed Bubblewrap study offers %q: %q", size[0], dead, bar)
			}
		}
		if !strings.Contains(bar, "] finished │") {
			t.Errorf("%d columns: a finished study no process runs is not shown finished: %q", size[0], bar)
		}
		s.keys("q")
		s.waitExit(5 * time.Second)
	}
}

// busyStudy starts a --batch study whose agent keeps a long experiment
// running, and waits until one runs.
func busyStudy(t *testing.T) (campaign, *bg) {
	t.Helper()
	c := newCampaign(t, "tui")
	reapMarker(t, c.marker)
	agentPath := filepath.Join(t.TempDir(), "agent.sh")
	copyExec(t, filepath.Join("testdata", "tui_agent.sh"), agentPath)
	sup := start(t, "study", "--campaign", c.dir, "--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "command", "--executable", agentPath, "--execution-backend", "bubblewrap",
		"--wall-seconds", "600", "--turn-seconds", "120", "--batch")
	waitFor(t, 20*time.Second, "a running experiment", func() bool {
		snap, err := tryStatus(t, c.dir)
		return err == nil && len(snap.withStatus("running")) > 0
	})
	return c, sup
}

// TestTUIInterruptedStudyShowsNoRunningExperiment: after kill -9 of its
// --batch supervisor mid-experiment, the study's dashboard shows the
// experiment interrupted, not running, with its wall time frozen.
func TestTUIInterruptedStudyShowsNoRunningExperiment(t *testing.T) {
	t.Parallel()
	c, sup := busyStudy(t)
	if err := sup.cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	sup.wait(t, 10*time.Second)
	s := tuiScreenSized(t, 120, 36, tuiEnv(), bin, "tui", "--campaign", c.dir)
	first := s.waitText(10*time.Second, "INTERRUPTED", "interrupted")
	row := func(scr string) string {
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, "exp_") && strings.Contains(l, "interrupted") {
				return l
			}
		}
		return ""
	}
	for _, l := range strings.Split(first, "\n") {
		if strings.Contains(l, "exp_") && strings.Contains(l, " running ") {
			t.Fatalf("a dead experiment shows as running: %q\n%s", l, first)
		}
	}
	// `interrupted` is wider than STATUS: the columns after it still line up.
	head, r := rowWith(first, "STATUS  "), []rune(row(first))
	if i := strings.Index(head, "BACKEND"); i < 0 || len(r) <= i || string(r[i:i+len("bubblewrap")]) != "bubblewrap" {
		t.Errorf("the BACKEND column does not line up with an interrupted row:\n%s\n%s", head, string(r))
	}
	if bar := footer(first); !strings.Contains(bar, "] stopped │") || !strings.Contains(bar, "r resume") {
		t.Errorf("an interrupted study no process runs: want stopped and r resume in %q", bar)
	}
	// The header counts the deadline down every second: once it changed,
	// time has passed, and the experiment's row must not have.
	left := func(scr string) string { return strings.SplitN(scr, "\n", 2)[0] }
	later := s.waitFor(10*time.Second, "the countdown to move", func(scr string) bool { return left(scr) != left(first) })
	if row(first) == "" || row(first) != row(later) {
		t.Fatalf("the interrupted experiment's row changed:\n%q\n%q", row(first), row(later))
	}
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// TestTUIHomeUpdatesWithoutAKey: the home screen shows a study's new
// status by itself after another shell pauses it.
func TestTUIHomeUpdatesWithoutAKey(t *testing.T) {
	t.Parallel()
	c, sup := busyStudy(t)
	ws := filepath.Dir(c.dir)
	s := tuiScreen(t, tuiEnv(), "env", "SIMJECTURE_WORKSPACE="+ws, bin, "tui")
	s.waitText(10*time.Second, "studies in "+ws, "running ●")
	if r := sj(t, "", "pause", "--campaign", c.dir); r.code != 0 {
		log, _ := os.ReadFile(filepath.Join(c.dir, "supervisor", "supervisor.log"))
		t.Fatalf("pause: %s\nsupervisor.log:\n%s", r, log)
	}
	sup.wait(t, 10*time.Second)
	s.waitFor(10*time.Second, "home to show the study paused", func(scr string) bool {
		return strings.Contains(scr, "paused") && !strings.Contains(scr, "running ●")
	})
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// TestTUISecondLaunchFromTheForm: two studies launched from the form in
// one session each get their own folder; the second launch succeeds.
func TestTUISecondLaunchFromTheForm(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "studies")
	agentPath := filepath.Join(tmp, "agent.sh")
	copyExec(t, filepath.Join("testdata", "tui_agent.sh"), agentPath)
	marker := "e2e-" + randomHex(t)
	reapMarker(t, marker)
	s := tuiScreen(t, tuiEnv(), "env", "SIMJECTURE_WORKSPACE="+ws, "SIMJECTURE_DEFAULT_EXECUTION_BACKEND=bubblewrap", bin, "tui")
	s.waitText(10*time.Second, "n new study")
	for i := range 2 {
		s.keys("n")
		s.waitText(10*time.Second, "New study", "‹ codex ›")
		s.typeText("Sleeping does not change the answer.")
		s.keys("Tab", "Tab")
		s.typeText("e2e-marker: " + marker)             // the agent names its experiments after it
		s.keys("Tab", "Tab", "Right", "Right", "Right") // agent backend: codex → claude → api → command
		s.waitText(5*time.Second, "‹ command ›")
		s.keys("Tab", "Tab")
		s.typeText(agentPath)
		s.keys("C-s")
		s.waitText(10*time.Second, "Review the frozen contract", "enter launch")
		s.keys("Enter")
		scr := s.waitFor(20*time.Second, "the dashboard or an error", func(scr string) bool {
			return strings.Contains(scr, "supervising") || strings.Contains(scr, "campaign ")
		})
		if !strings.Contains(scr, "supervising") {
			t.Fatalf("launch %d failed:\n%s", i+1, scr)
		}
		s.keys("q")
		s.waitText(5*time.Second, "Pause the study and leave?")
		s.keys("y")
		s.waitText(15*time.Second, "studies in "+ws, "paused")
	}
	entries, err := os.ReadDir(ws)
	if err != nil || len(entries) != 2 {
		t.Fatalf("want two studies under %s, found %v (%v)", ws, entries, err)
	}
	// A third launch into the first study's folder says it holds a study.
	taken := filepath.Join(ws, entries[0].Name())
	s.keys("n")
	s.waitText(10*time.Second, "New study", "‹ codex ›")
	s.typeText("Sleeping does not change the answer.")
	s.keys("Tab", "Tab")
	s.typeText("e2e-marker: " + marker)
	s.keys("Tab", "Tab", "Right", "Right", "Right") // agent backend: codex → claude → api → command
	s.waitText(5*time.Second, "‹ command ›")
	s.keys("Tab", "Tab")
	s.typeText(agentPath)
	for range 5 { // Executable → Campaign folder
		s.keys("Tab")
	}
	s.keys("C-u")
	s.typeText(taken)
	s.keys("C-s")
	scr := s.waitFor(10*time.Second, "the review or an error", func(scr string) bool {
		return strings.Contains(scr, "enter launch") || strings.Contains(flat(scr), "holds")
	})
	if strings.Contains(scr, "enter launch") {
		s.keys("Enter")
	}
	scr = s.waitFlat(10*time.Second, taken+" already holds a study")
	if strings.Contains(flat(scr), "holds no study") {
		t.Errorf("a folder that holds a study is said to hold none:\n%s", scr)
	}
	if after, _ := os.ReadDir(ws); len(after) != 2 {
		t.Errorf("the refused launch changed %s: %d entries", ws, len(after))
	}
	s.keys("C-c") // q would be typed into the form
	s.waitExit(5 * time.Second)
}
