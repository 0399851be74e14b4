package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// faultStudy is a study whose agent is testdata/fault_agent.py with a plan.
type faultStudy struct {
	dir, hyp, ins, exe string
}

func newFaultStudy(t *testing.T, plan string) faultStudy {
	t.Helper()
	tmp := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "fault_agent.py"))
	if err != nil {
		t.Fatal(err)
	}
	s := faultStudy{dir: filepath.Join(tmp, "study"), hyp: filepath.Join(tmp, "hypothesis.txt"),
		ins: filepath.Join(tmp, "instructions.txt"), exe: filepath.Join(tmp, "agent", "fault_agent.py")}
	if err := os.Mkdir(filepath.Dir(s.exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.exe, src, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(filepath.Dir(s.exe), "fault_plan.txt"), plan)
	writeFile(t, s.hyp, "Every provider outage is survivable.\n")
	writeFile(t, s.ins, "Provider fault test.\n")
	return s
}

func (s faultStudy) args(wall int) []string {
	return []string{"study", "--campaign", s.dir, "--hypothesis-file", s.hyp, "--instructions-file", s.ins,
		"--backend", "command", "--executable", s.exe, "--execution-backend", "bubblewrap",
		"--wall-seconds", fmt.Sprint(wall), "--turn-seconds", fmt.Sprint(min(30, wall)), "--batch"}
}

func (s faultStudy) resume() []string { return []string{"resume", "--campaign", s.dir, "--batch"} }

// TestCommandTransientFailureRecovers: a command agent that prints "HTTP
// 429 rate limit" on stderr and exits 1 is retried after 2 s; the next turn
// succeeds and records the recovery; the one after pauses the study.
func TestCommandTransientFailureRecovers(t *testing.T) {
	t.Parallel()
	// Turn 2 succeeds on its own, so its recovery is recorded before a
	// later turn pauses the study (a turn that pauses may be stopped by
	// that pause before it returns: not a good turn).
	s := newFaultStudy(t, "1 fail HTTP 429 rate limit\n2 say recovered\n* pause\n")
	r := sj(t, "", s.args(120)...)
	if r.code != 0 {
		t.Fatalf("want exit 0, got %s", r)
	}
	snap := mustAPIStatus(t, s.dir)
	p := snap.Provider
	if snap.Status != "paused" || p.RetryCount != 1 || p.ConsecutiveFailures != 0 || p.ErrorCategory != nil || p.WaitSeconds < 1.5 {
		t.Errorf("want paused, retry_count 1, consecutive_failures 0, about 2 s waited:\n%s", snap.raw)
	}
	evs, _ := apiEvents(t, s.dir)
	checkReconnectEvents(t, evs, 1)
	checkDeadlineKept(t, evs, snap)
}

// TestAgentTextIsNeverClassified: an agent whose own output quotes "401"
// and "quota exhausted" (stdout and stderr, exit 0) has not failed.
func TestAgentTextIsNeverClassified(t *testing.T) {
	t.Parallel()
	s := newFaultStudy(t, "1 say HTTP 401 Unauthorized, quota exhausted, insufficient balance: examples in my notes\n* pause\n")
	r := sj(t, "", s.args(120)...)
	if r.code != 0 {
		t.Fatalf("want exit 0, got %s", r)
	}
	snap := mustAPIStatus(t, s.dir)
	if snap.Status != "paused" || snap.Provider.RetryCount != 0 || snap.Provider.ErrorCategory != nil {
		t.Errorf("the agent's own words were classified as a failure:\n%s", snap.raw)
	}
	evs, _ := apiEvents(t, s.dir)
	for _, typ := range []string{"provider_needs_attention", "provider_reconnect_scheduled"} {
		if n := len(eventsOf(evs, typ)); n != 0 {
			t.Errorf("%d %s events for an agent that exited 0", n, typ)
		}
	}
}

// fiveFailures drives an always-failing agent to five consecutive
// failures: each run fails once, and the test pauses it during its wait
// (a paused study keeps its counters), so the next failure waits 60 s.
func fiveFailures(t *testing.T, s faultStudy, wall int) {
	t.Helper()
	for k := 1; k <= 5; k++ {
		args := s.resume()
		if k == 1 {
			args = s.args(wall)
		}
		p := start(t, args...)
		waitRetry(t, p, s.dir, k)
		if r := sj(t, "", "pause", "--campaign", s.dir); r.code != 0 {
			t.Fatalf("pause: %s", r)
		}
		if r := p.wait(t, 5*time.Second); r.code != 0 {
			t.Fatalf("paused during wait %d: want exit 0, got %s", k, r)
		}
	}
}

// waitRetry waits until the study run by p waits to retry after k failures.
func waitRetry(t *testing.T, p *bg, dir string, k int) apiSnap {
	t.Helper()
	var snap apiSnap
	waitFor(t, 20*time.Second, fmt.Sprintf("the wait after failure %d", k), func() bool {
		if p.exitedYet() {
			t.Fatalf("the study exited before failure %d: %s", k, p.result())
		}
		s, ok := apiStatus(t, dir)
		snap = s
		return ok && s.Provider.ConsecutiveFailures == k && s.Provider.NextRetryAt != nil
	})
	return snap
}

// TestCancelDuringSixtySecondWait: `simjecture cancel` ends a 60 s provider
// wait, and the study, within 1 s.
func TestCancelDuringSixtySecondWait(t *testing.T) {
	t.Parallel()
	s := newFaultStudy(t, "* fail HTTP 503 Service Unavailable: overloaded\n")
	fiveFailures(t, s, 600)
	p := start(t, s.resume()...)
	snap := waitRetry(t, p, s.dir, 6)
	if left := time.Until(*snap.Provider.NextRetryAt); left < 50*time.Second {
		t.Fatalf("the sixth failure should wait 60 s, next retry in %v:\n%s", left, snap.raw)
	}
	cancelWithinASecond(t, p, s.dir, "a 60 s wait")
	end := mustAPIStatus(t, s.dir)
	if end.Status != "cancelled" || end.Provider.NextRetryAt != nil || end.Provider.RetryCount != 6 || end.Provider.WaitSeconds <= 0 {
		t.Errorf("want cancelled, no next_retry_at, retry_count 6, wait recorded:\n%s", end.raw)
	}
	evs, _ := apiEvents(t, s.dir)
	checkBackoffs(t, eventsOf(evs, "provider_reconnect_scheduled"), end.Deadline)
	checkDeadlineKept(t, evs, end)
}

// TestDeadlineDuringSixtySecondWait: the sixth failure's 60 s wait is
// capped by the deadline, and the study ends within 1 s of it with 124.
func TestDeadlineDuringSixtySecondWait(t *testing.T) {
	t.Parallel()
	s := newFaultStudy(t, "* fail HTTP 429 Too Many Requests\n")
	fiveFailures(t, s, 15)
	p := start(t, s.resume()...)
	snap := waitRetry(t, p, s.dir, 6)
	left := snap.Deadline.Sub(*snap.Provider.NextRetryAt)
	if left < -time.Second || left > time.Second {
		t.Errorf("the sixth wait should end at the deadline %v, next retry at %v", snap.Deadline, snap.Provider.NextRetryAt)
	}
	r := p.wait(t, 30*time.Second)
	late := p.exited.Sub(snap.Deadline)
	t.Logf("deadline during a (capped) 60 s wait: the study exited %v after the deadline", late.Round(time.Millisecond))
	if r.code != 124 || late < -100*time.Millisecond || late > time.Second {
		t.Errorf("want exit 124 within 1 s after the deadline, got exit %d, %v after it", r.code, late)
	}
	end := mustAPIStatus(t, s.dir)
	if end.Status != "budget_exhausted" || end.Provider.RetryCount != 6 {
		t.Errorf("want budget_exhausted, retry_count 6:\n%s", end.raw)
	}
	evs, _ := apiEvents(t, s.dir)
	sched := eventsOf(evs, "provider_reconnect_scheduled")
	capped, _ := sched[len(sched)-1].Payload["delay_seconds"].(float64)
	if capped >= 60 {
		t.Errorf("the sixth wait was not capped by the deadline: %v s", capped)
	}
	checkBackoffs(t, sched, end.Deadline)
	checkDeadlineKept(t, evs, end)
}

// TestResumeRefusesAnUnavailableBackend: a paused Bubblewrap study resumed
// where Bubblewrap now fails its probe exits 2 naming the probe's reason,
// and nothing runs (before, every experiment failed at once, turn after
// turn).
func TestResumeRefusesAnUnavailableBackend(t *testing.T) {
	t.Parallel()
	s := newFaultStudy(t, "* pause\n")
	if r := sj(t, "", s.args(120)...); r.code != 0 {
		t.Fatalf("want exit 0, got %s", r)
	}
	before := mustAPIStatus(t, s.dir)
	fake := filepath.Join(t.TempDir(), "bwrap")
	writeFile(t, fake, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	r := sjWith(t, []string{"SIMJECTURE_BWRAP=" + fake}, "", s.resume()...)
	if r.code != 2 || !strings.Contains(r.stderr, "bubblewrap is not available") ||
		!strings.Contains(r.stderr, "No permissions to create new namespace") {
		t.Fatalf("want exit 2 naming the probe's reason, got %s", r)
	}
	after := mustAPIStatus(t, s.dir)
	if after.Status != "paused" || after.Turn != before.Turn {
		t.Errorf("the refused resume changed the study: turn %d → %d, status %s", before.Turn, after.Turn, after.Status)
	}
}
