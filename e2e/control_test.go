package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// stopLatency is how long a supervisor may take to act on pause, cancel or
// its deadline: the contract says 1 s; the rest is slack for a loaded CI host.
const stopLatency = 1500 * time.Millisecond

// stopPromptly runs pause or cancel (command) against the study sup
// supervises and checks that sup exits 0 within stopLatency of it; what
// names the case in the log.
func stopPromptly(t *testing.T, c campaign, sup *bg, command, what string) {
	t.Helper()
	took, r := control(t, c, sup, command)
	t.Logf("%s: supervisor exited %v after the %s command returned", what, took.Round(time.Millisecond), command)
	if r.code != 0 {
		t.Errorf("supervisor after %s: want exit 0, got %s", command, r)
	}
	if took > stopLatency {
		t.Errorf("supervisor exited %v after %s returned, want within %v", took, command, stopLatency)
	}
}

// TestPauseAndCancelFromAnotherProcess pauses and then cancels a busy study
// from separate `pause` and `cancel` commands and measures how quickly the
// supervisor exits.
func TestPauseAndCancelFromAnotherProcess(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "busy", "e2e-seconds: 30")
	reapMarker(t, c.marker)
	sup := start(t, c.args(300, 120)...)
	first := waitRunning(t, c, sup, "")

	stopPromptly(t, c, sup, "pause", "pause")
	snap := status(t, c.dir)
	if snap.Status != "paused" {
		t.Errorf("status after pause = %q, want paused", snap.Status)
	}
	e, _ := snap.experiment(first.ID)
	t.Logf("the experiment running at pause is now %q", e.Status)
	if e.Status != "running" {
		// Its receipt says it stopped, so nothing of it may still run.
		waitGone(t, c.marker, 2*time.Second, "after the pause stopped the experiment as "+e.Status)
	}

	sup = start(t, "resume", "--campaign", c.dir, "--batch")
	second := waitRunning(t, c, sup, first.ID)
	stopPromptly(t, c, sup, "cancel", "cancel")
	snap = status(t, c.dir)
	if snap.Status != "cancelled" {
		t.Errorf("status after cancel = %q, want cancelled", snap.Status)
	}
	if e, _ := snap.experiment(second.ID); e.Status != "cancelled" {
		t.Errorf("experiment %s running at cancel is %q, want cancelled", second.ID, e.Status)
	}
	waitGone(t, c.marker, 2*time.Second, "after the supervisor exited on cancel")
}

// control runs `simjecture CMD --campaign DIR` and returns how long after
// it returned the supervisor exited, with the supervisor's result.
func control(t *testing.T, c campaign, sup *bg, cmd string) (time.Duration, result) {
	t.Helper()
	if r := sj(t, "", cmd, "--campaign", c.dir); r.code != 0 {
		t.Fatalf("%s: want exit 0, got %s", cmd, r)
	}
	returned := time.Now()
	r := sup.wait(t, 10*time.Second)
	return sup.exited.Sub(returned), r
}

// TestDeadlineExits124 gives a study 2 s and an agent that starts a long
// experiment: the supervisor must stop at the deadline with exit 124.
func TestDeadlineExits124(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "busy", "e2e-seconds: 60")
	reapMarker(t, c.marker)
	sup := start(t, c.args(2, 2)...)
	var deadline time.Time
	waitFor(t, 5*time.Second, "the study to be created", func() bool {
		s, err := tryStatus(t, c.dir)
		deadline = s.Deadline
		return err == nil && !deadline.IsZero()
	})
	r := sup.wait(t, 10*time.Second)
	late := sup.exited.Sub(deadline)
	t.Logf("deadline: supervisor exited %v after the recorded deadline", late.Round(time.Millisecond))
	if r.code != 124 {
		t.Errorf("study past its deadline: want exit 124, got %s", r)
	}
	if late > stopLatency {
		t.Errorf("supervisor exited %v after the deadline %s, want within %v", late, deadline.Format(time.RFC3339), stopLatency)
	}
	snap := status(t, c.dir)
	if snap.Status != "budget_exhausted" {
		t.Errorf("status = %q, want budget_exhausted", snap.Status)
	}
	if len(snap.Experiments) == 0 {
		t.Fatal("the agent's experiment was not recorded")
	}
	for _, e := range snap.Experiments {
		if e.Status != "cancelled" {
			t.Errorf("experiment %s is %q at the deadline, want cancelled", e.ID, e.Status)
		}
	}
	waitGone(t, c.marker, 2*time.Second, "after the deadline")
}

// TestPauseDuringAgentTurn pauses a study while its worker agent is in the
// middle of a long turn. The contract's 1 s holds for the agent too: an
// agent that ignores SIGTERM must not hold the supervisor up.
func TestPauseDuringAgentTurn(t *testing.T) {
	t.Parallel()
	for _, ignore := range []string{"no", "yes"} {
		t.Run("ignores SIGTERM: "+ignore, func(t *testing.T) {
			t.Parallel()
			c := newCampaign(t, "slowturn", "e2e-seconds: 30", "e2e-ignore-term: "+ignore)
			sup := start(t, c.args(300, 120)...)
			pidFile := filepath.Join(c.dir, "research", "agent.pid")
			var pid int
			waitFor(t, 10*time.Second, "the agent to start its turn", func() bool {
				if sup.exitedYet() {
					t.Fatalf("the supervisor exited early:\n%s", sup.result())
				}
				b, err := os.ReadFile(pidFile)
				return err == nil && json.Unmarshal(b, &pid) == nil && pid > 0
			})
			if pid = hostPid(pid, filepath.Join(c.dir, "research")); pid == 0 {
				t.Fatal("the agent that wrote agent.pid is not alive in its turn")
			}
			t.Cleanup(func() {
				if alive(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			stopPromptly(t, c, sup, "pause", "pause during an agent turn")
			if s := status(t, c.dir); s.Status != "paused" {
				t.Errorf("status after pause = %q, want paused", s.Status)
			}
			waitFor(t, 2*time.Second, fmt.Sprintf("the agent (pid %d) to be gone after the supervisor exited", pid), func() bool {
				return !alive(pid)
			})
		})
	}
}

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !isZombie(st)
}

// TestCancelExperimentIgnoringSIGTERM cancels a study whose running
// experiment ignores SIGTERM: the contract's 1 s still holds, and the
// experiment must not outlive the supervisor.
func TestCancelExperimentIgnoringSIGTERM(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "busy", "e2e-seconds: 30", "e2e-ignore-term: yes")
	reapMarker(t, c.marker)
	sup := start(t, c.args(300, 120)...)
	running := waitRunning(t, c, sup, "")
	stopPromptly(t, c, sup, "cancel", "cancel with an experiment ignoring SIGTERM")
	snap := status(t, c.dir)
	if e, _ := snap.experiment(running.ID); snap.Status != "cancelled" || e.Status != "cancelled" {
		t.Errorf("after cancel: study %q, experiment %q; want both cancelled", snap.Status, e.Status)
	}
	waitGone(t, c.marker, time.Second, "after the supervisor exited on cancel")
}
