package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestAPITransientFaultIsRetried: each transient fault of the endpoint, on
// the first request of the second worker turn (after an experiment was
// queued), is retried after 2 s in the same study, which then completes:
// retry_count 1, consecutive_failures 1 during the wait and 0 after,
// provider_reconnect_scheduled then provider_reconnected, and the ledger and
// deadline unchanged by the retry.
func TestAPITransientFaultIsRetried(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"429", "500", "503", "cut"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			s := newAPIStudy(t, map[int]string{2: fault})
			p := start(t, s.args(120, 30)...)
			var during apiSnap
			waitFor(t, 30*time.Second, "the provider wait", func() bool {
				snap, ok := apiStatus(t, s.dir)
				during = snap
				return ok && snap.Provider.NextRetryAt != nil || p.exitedYet()
			})
			r := p.wait(t, 30*time.Second)
			if r.code != 0 {
				t.Fatalf("want exit 0 after the retry, got %s", r)
			}
			checkWaitSnapshot(t, during)
			end := mustAPIStatus(t, s.dir)
			checkRecovered(t, end, during)
			evs, evText := apiEvents(t, s.dir)
			checkReconnectEvents(t, evs, 1)
			checkNoKey(t, s.dir, s.key, r.stdout+r.stderr+evText)
		})
	}
}

// checkWaitSnapshot: during the 2 s wait the counters show one failure.
func checkWaitSnapshot(t *testing.T, s apiSnap) {
	t.Helper()
	p := s.Provider
	if p.NextRetryAt == nil || p.RetryCount != 1 || p.ConsecutiveFailures != 1 ||
		p.ErrorCategory == nil || *p.ErrorCategory != "transient" || s.Status != "running" {
		t.Fatalf("during the wait want running, retry_count 1, consecutive_failures 1, transient, next_retry_at set:\n%s", s.raw)
	}
	if len(s.Experiments) != 1 {
		t.Fatalf("the fault was meant to hit after one experiment was queued:\n%s", s.raw)
	}
}

// checkRecovered: completed, counters reset except the cumulative ones,
// and the same ledger and deadline as during the wait.
func checkRecovered(t *testing.T, end, during apiSnap) {
	t.Helper()
	p := end.Provider
	if end.Status != "completed" || p.RetryCount != 1 || p.ConsecutiveFailures != 0 || p.NextRetryAt != nil ||
		p.ErrorCategory != nil || p.Attention != nil {
		t.Errorf("after recovery want completed, retry_count 1, consecutive_failures 0, no error:\n%s", end.raw)
	}
	if p.WaitSeconds < 1.5 || p.WaitSeconds > 5 {
		t.Errorf("wait_seconds = %.2f, want about 2", p.WaitSeconds)
	}
	if end.experimentIDs() != during.experimentIDs() {
		t.Errorf("the retry changed the ledger: %s, was %s", end.experimentIDs(), during.experimentIDs())
	}
	if !end.Deadline.Equal(during.Deadline) {
		t.Errorf("the retry moved the deadline: %v, was %v", end.Deadline, during.Deadline)
	}
}

// checkReconnectEvents wants n scheduled reconnects (2, 4 … s), then one
// provider_reconnected{attempts n}, and no attention event.
func checkReconnectEvents(t *testing.T, evs []apiEvent, n int) {
	t.Helper()
	sched := eventsOf(evs, "provider_reconnect_scheduled")
	if len(sched) != n {
		t.Fatalf("%d provider_reconnect_scheduled events, want %d", len(sched), n)
	}
	checkBackoffs(t, sched, time.Time{})
	rec := eventsOf(evs, "provider_reconnected")
	if len(rec) != 1 || rec[0].Payload["attempts"] != float64(n) || rec[0].Seq < sched[n-1].Seq {
		t.Errorf("want one provider_reconnected{attempts %d} after the last schedule, got %v", n, rec)
	}
	if a := eventsOf(evs, "provider_needs_attention"); len(a) != 0 {
		t.Errorf("a transient fault asked for attention: %v", a)
	}
}

// checkBackoffs wants attempts 1, 2 … with delays 2, 4, 8, 16, 32, 60 s,
// each capped by the time left before the deadline (a zero deadline: none).
func checkBackoffs(t *testing.T, sched []apiEvent, deadline time.Time) {
	t.Helper()
	for i, ev := range sched {
		want := time.Duration(min(60, 2<<i)) * time.Second
		if left := deadline.Sub(ev.Time); !deadline.IsZero() && left < want {
			want = left
		}
		delay, _ := ev.Payload["delay_seconds"].(float64)
		got := time.Duration(delay * float64(time.Second))
		if ev.Payload["attempt"] != float64(i+1) || got > want+10*time.Millisecond || got < want-time.Second {
			t.Errorf("reconnect %d: payload %v, want attempt %d, delay %v", i+1, ev.Payload, i+1, want.Round(time.Millisecond))
		}
	}
}

// TestAPIFaultNeedsOperator: authentication, quota and permission faults
// stop the study at once for the operator: exit 1, paused_external_error,
// the category and its attention message, nothing counted as a retry, the
// deadline kept, and a key quoted by the endpoint shown as [redacted].
func TestAPIFaultNeedsOperator(t *testing.T) {
	t.Parallel()
	cases := []struct{ fault, category, attention string }{
		{"401", "authentication", "Fix the credentials"},
		{"402", "quota", "Restore credit"},
		{"403", "permission", "Fix the account or model configuration"},
		{"429quota", "quota", "Restore credit"},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			t.Parallel()
			s := newAPIStudy(t, map[int]string{1: c.fault})
			r := sj(t, "", s.args(120, 30)...)
			if r.code != 1 {
				t.Fatalf("want exit 1 (operator's attention), got %s", r)
			}
			snap := mustAPIStatus(t, s.dir)
			p := snap.Provider
			if snap.Status != "paused_external_error" || p.ErrorCategory == nil || *p.ErrorCategory != c.category ||
				p.Attention == nil || !strings.Contains(*p.Attention, c.attention) || p.RetryCount != 0 || p.NextRetryAt != nil {
				t.Fatalf("want paused_external_error, %s, attention with %q, retry_count 0:\n%s", c.category, c.attention, snap.raw)
			}
			if c.fault == "401" && !strings.Contains(*p.Attention, "[redacted]") {
				t.Errorf("the endpoint quoted the key, the attention message should show [redacted]: %q", *p.Attention)
			}
			evs, evText := apiEvents(t, s.dir)
			att := eventsOf(evs, "provider_needs_attention")
			if len(att) != 1 || att[0].Payload["category"] != c.category || len(eventsOf(evs, "provider_reconnect_scheduled")) != 0 {
				t.Errorf("want one provider_needs_attention{%s} and no reconnect, got %v", c.category, att)
			}
			checkDeadlineKept(t, evs, snap)
			checkNoKey(t, s.dir, s.key, r.stdout+r.stderr+evText)
		})
	}
}

// checkDeadlineKept compares the deadline with the one study_created froze.
func checkDeadlineKept(t *testing.T, evs []apiEvent, snap apiSnap) {
	t.Helper()
	created := eventsOf(evs, "study_created")
	if len(created) != 1 {
		t.Fatalf("%d study_created events", len(created))
	}
	frozen, err := time.Parse(time.RFC3339, created[0].Payload["deadline"].(string))
	if err != nil || !frozen.Equal(snap.Deadline) {
		t.Errorf("deadline %v, frozen at creation as %v (%v)", snap.Deadline, frozen, err)
	}
}

// TestAPIHungResponseIsACheckpoint: a response that never comes is cut at
// the turn allowance, which is a checkpoint and not a provider failure;
// the next turn carries on and the study completes.
func TestAPIHungResponseIsACheckpoint(t *testing.T) {
	t.Parallel()
	s := newAPIStudy(t, map[int]string{1: "hang"})
	r := sj(t, "", s.args(120, 3)...)
	if r.code != 0 {
		t.Fatalf("want exit 0, got %s", r)
	}
	if r.took < 3*time.Second {
		t.Errorf("the study took %v; the hung turn should have used its 3 s allowance", r.took)
	}
	snap := mustAPIStatus(t, s.dir)
	if snap.Status != "completed" || snap.Provider.RetryCount != 0 || snap.Provider.ErrorCategory != nil {
		t.Errorf("want completed with no provider failure counted:\n%s", snap.raw)
	}
	evs, _ := apiEvents(t, s.dir)
	if n := len(eventsOf(evs, "provider_reconnect_scheduled")); n != 0 {
		t.Errorf("a turn cut at its allowance was retried as a failure (%d reconnects)", n)
	}
}

// TestAPICancelDuringHungResponse: cancel reaches a turn whose response
// never comes: the study ends within 1 s, and nothing counts as a failure.
func TestAPICancelDuringHungResponse(t *testing.T) {
	t.Parallel()
	s := newAPIStudy(t, map[int]string{1: "hang"})
	p := start(t, s.args(120, 60)...)
	waitFor(t, 20*time.Second, "the first request", func() bool {
		n, _, _ := s.mock.counts()
		return n >= 1 || p.exitedYet()
	})
	cancelWithinASecond(t, p, s.dir, "a hung API response")
	snap := mustAPIStatus(t, s.dir)
	if snap.Status != "cancelled" || snap.Provider.RetryCount != 0 || snap.Provider.ErrorCategory != nil {
		t.Errorf("want cancelled with no provider failure:\n%s", snap.raw)
	}
}

// cancelWithinASecond runs cancel on the study p supervises and checks that
// p exits 0 within 1 s of it (contract section 3); what names the moment.
func cancelWithinASecond(t *testing.T, p *bg, dir, what string) {
	t.Helper()
	asked := time.Now()
	if r := sj(t, "", "cancel", "--campaign", dir); r.code != 0 {
		t.Fatalf("cancel: %s", r)
	}
	r := p.wait(t, 5*time.Second)
	latency := p.exited.Sub(asked)
	t.Logf("cancel during %s: the study exited %v after cancel was run", what, latency.Round(time.Millisecond))
	if r.code != 0 || latency > time.Second {
		t.Errorf("want exit 0 within 1 s of cancel, got exit %d after %v", r.code, latency)
	}
}
