package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTUILeavesAStudyRunning: the UI resumes a paused study with r (it
// supervises it), then q and b hand it to a detached `resume --batch` and
// go back home, where the study shows as run by another process. Killing
// the tmux session (the UI's terminal goes away, SIGHUP) kills the UI, not
// the study; a new UI on it shows it attached; once the agent may go on,
// the study completes without any UI. The agent waits at the start of each
// turn until the test creates DIR/go, then is the cubes agent.
func TestTUILeavesAStudyRunning(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "cubes")
	gate := filepath.Join(c.dir, "go")
	wrapper := filepath.Join(t.TempDir(), "agent.sh")
	writeFile(t, wrapper, fmt.Sprintf("#!/bin/sh\nwhile [ ! -e %q ]; do sleep 0.1; done\nexec %q\n", gate, agent))
	pauseGatedStudy(t, c, wrapper)
	t.Cleanup(func() { stopBackground(t, c.dir) })

	ws := filepath.Dir(c.dir)
	s := tuiScreen(t, tuiEnv(), "env", "SIMJECTURE_WORKSPACE="+ws, bin, "tui")
	s.waitText(10*time.Second, "studies in "+ws, "paused")
	s.keys("Enter")
	s.waitText(10*time.Second, "PAUSED")
	s.keys("r")
	s.waitText(20*time.Second, "RUNNING", "supervising")
	s.keys("q")
	s.waitText(5*time.Second, "b leave it running")
	s.keys("b")
	s.waitText(20*time.Second, "studies in "+ws, "running ●")
	uiPID := s.panePID()

	s.tmux(nil, "kill-session", "-t", s.name)
	waitFor(t, 10*time.Second, "the UI to die with its terminal", func() bool { return !alive(uiPID) })
	if snap := status(t, c.dir); snap.Status != "running" {
		t.Fatalf("after the UI's terminal closed the study is %q, want running (owned by the background supervisor)", snap.Status)
	}

	again := tuiScreen(t, tuiEnv(), bin, "tui", "--campaign", c.dir)
	scr := again.waitText(10*time.Second, "RUNNING", "attached")
	t.Logf("a new UI attaches to the background supervisor:\n%s", scr)
	again.keys("q")
	again.waitExit(5 * time.Second)

	writeFile(t, gate, "\n")
	waitFor(t, 90*time.Second, "the background supervisor to complete the study", func() bool {
		snap, err := tryStatus(t, c.dir)
		return err == nil && snap.Status == "completed"
	})
	if b, err := os.ReadFile(filepath.Join(c.dir, "supervisor", "background.log")); err != nil {
		t.Errorf("the background supervisor's log: %v", err)
	} else {
		t.Logf("background.log:\n%s", b)
	}
}

// panePID is the pid of the program the session runs.
func (s *screen) panePID() int {
	s.t.Helper()
	out := s.tmux(nil, "list-panes", "-t", s.name, "-F", "#{pane_pid}")
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		s.t.Fatalf("pane pid %q: %v", out, err)
	}
	return pid
}

// stopBackground cancels a study a detached supervisor may still run (a
// failed test) and waits until no supervisor owns it.
func stopBackground(t *testing.T, dir string) {
	snap, err := tryStatus(t, dir)
	if err != nil || snap.Status != "running" {
		return
	}
	_ = sj(t, "", "cancel", "--campaign", dir)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if snap, err := tryStatus(t, dir); err != nil || snap.Status != "running" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
