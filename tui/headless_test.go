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
