package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/engine"
)

// TestSummaryLineElapsedIsTheStudysOwn: a running (or interrupted) study's
// elapsed time runs to now; a stopped one's ends at its newest event, so a
// record read a day later still shows its own duration.
func TestSummaryLineElapsedIsTheStudysOwn(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	last := created.Add(41 * time.Second)
	now := created.Add(26 * time.Hour)
	for _, tc := range []struct {
		status engine.Status
		want   string
	}{
		{engine.StatusCompleted, "00:41 elapsed · ended"},
		{engine.StatusCancelled, "00:41 elapsed · ended"},
		{engine.StatusPaused, "00:41 elapsed · 0s left"},
		{engine.StatusRunning, "1560:00 elapsed · 0s left"},
		{engine.StatusInterrupted, "1560:00 elapsed · 0s left"},
	} {
		t.Run(string(tc.status), func(t *testing.T) {
			t.Parallel()
			var s engine.Summary
			s.Status, s.CreatedAt, s.LastEventAt = tc.status, created, last
			if line := SummaryLine(s, now); !strings.Contains(line, tc.want) {
				t.Errorf("want %q in %q", tc.want, line)
			}
		})
	}
}

// TestSummaryLineCountsStoppedApart: experiments cancelled or interrupted
// (a pause, a cancel, a killed supervisor) are counted as stopped, not as
// failed; failed and timed out experiments are failures.
func TestSummaryLineCountsStoppedApart(t *testing.T) {
	t.Parallel()
	var s engine.Summary
	s.Status = engine.StatusPaused
	s.Experiments = map[engine.ExpStatus]int{engine.ExpRunning: 1, engine.ExpQueued: 1, engine.ExpSucceeded: 3,
		engine.ExpFailed: 1, engine.ExpTimedOut: 1, engine.ExpCancelled: 2, engine.ExpInterrupted: 4}
	want := "jobs 2 running / 3 done / 2 failed / 6 stopped"
	if line := SummaryLine(s, time.Now()); !strings.Contains(line, want) {
		t.Errorf("want %q in %q", want, line)
	}
}
