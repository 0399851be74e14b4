package engine

import (
	"context"
	"testing"
	"time"
)

// TestDeadlineKeepsSubSecondPrecision: the frozen deadline is created-at
// plus the wall seconds exactly, and created-at is the moment of creation,
// not the second before it (an 8 s study once stopped at 7.2 s).
func TestDeadlineKeepsSubSecondPrecision(t *testing.T) {
	before := time.Now()
	_, s := newTestStudy(t, func(r *Request) { r.WallSeconds, r.TurnSeconds = 8, 8 })
	k, err := LoadContract(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if k.CreatedAt.Before(before) {
		t.Errorf("created_at %s is before the study was created (%s): truncated", k.CreatedAt, before.UTC())
	}
	if got := k.Deadline.Sub(k.CreatedAt); got != 8*time.Second {
		t.Errorf("deadline - created_at = %s, want 8s", got)
	}
}
