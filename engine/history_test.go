package engine

import (
	"context"
	"testing"

	"github.com/simjecture/simjecture/store"
)

// TestEventsPages: pages before and after a seq, oldest first, without
// record events, bounded by the limit.
func TestEventsPages(t *testing.T) {
	ctx := context.Background()
	c, s := newTestStudy(t, nil)
	err := s.Tx(ctx, func(tx *store.Tx) error {
		for i := range 10 {
			if err := appendEvent(tx, TurnStartedPayload{Role: "worker", Turn: i + 1}); err != nil {
				return err
			}
			if err := appendEvent(tx, RecordPayload{Kind: store.Claims, ID: "root"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := OpenView(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	all, err := v.Events(ctx, EventPage{Limit: MaxEventPage})
	if err != nil {
		t.Fatal(err)
	}
	var turns []int64
	for i, ev := range all {
		if ev.Type == EvRecord {
			t.Fatalf("event %d is a record event", ev.Seq)
		}
		if i > 0 && ev.Seq <= all[i-1].Seq {
			t.Fatalf("events not oldest first: %d after %d", ev.Seq, all[i-1].Seq)
		}
		if ev.Type == EvTurnStarted {
			turns = append(turns, ev.Seq)
		}
	}
	if len(turns) != 10 {
		t.Fatalf("%d turn events, want 10", len(turns))
	}
	cases := []struct {
		name string
		page EventPage
		want []int64
	}{
		{"newest 3 before the 8th turn", EventPage{Before: turns[7], Limit: 3}, turns[4:7]},
		{"oldest 2 after the 8th turn", EventPage{After: turns[7], Limit: 2}, turns[8:10]},
		{"after the newest: none", EventPage{After: turns[9], Limit: 5}, nil},
	}
	for _, tc := range cases {
		got, err := v.Events(ctx, tc.page)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, ev := range got {
			seqs = append(seqs, ev.Seq)
		}
		if len(seqs) != len(tc.want) || (len(seqs) > 0 && (seqs[0] != tc.want[0] || seqs[len(seqs)-1] != tc.want[len(tc.want)-1])) {
			t.Errorf("%s: seqs %v, want %v", tc.name, seqs, tc.want)
		}
	}
}
