package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func queueN(t *testing.T, c Campaign, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if _, err := Steer(context.Background(), c, fmt.Sprintf("guidance %d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
}

func promptTexts(msgs []PromptSteering) (seen, fresh []string) {
	for _, m := range msgs {
		if m.New {
			fresh = append(fresh, m.Text)
		} else {
			seen = append(seen, m.Text)
		}
	}
	return seen, fresh
}

func guidance(ns ...int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("guidance %d", n))
	}
	return out
}

// Each turn's prompt carries the 4 latest delivered messages and up to 4
// undelivered ones, oldest first, and stamps those delivered in the
// transaction that starts the turn.
func TestTurnStartDeliversSteeringFourAndFour(t *testing.T) {
	c, s := newTestStudy(t, nil)
	sv := &Supervisor{c: c, s: s, Bus: NewBus()}
	queueN(t, c, 1, 10)
	for i, tc := range []struct {
		queue       [2]int // messages queued before the turn
		seen, fresh []string
	}{
		{fresh: guidance(1, 2, 3, 4)},
		{seen: guidance(1, 2, 3, 4), fresh: guidance(5, 6, 7, 8)},
		{seen: guidance(5, 6, 7, 8), fresh: guidance(9, 10)},
		{seen: guidance(7, 8, 9, 10)},
		{queue: [2]int{11, 11}, seen: guidance(7, 8, 9, 10), fresh: guidance(11)},
	} {
		if tc.queue[0] != 0 {
			queueN(t, c, tc.queue[0], tc.queue[1])
		}
		st, _, _, msgs, err := sv.turnStart(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		seen, fresh := promptTexts(msgs)
		if st.Turn != i+1 || !slices.Equal(seen, tc.seen) || !slices.Equal(fresh, tc.fresh) {
			t.Fatalf("turn %d carries seen %v, new %v; want %v, %v", st.Turn, seen, fresh, tc.seen, tc.fresh)
		}
	}
	delivered := 0
	for _, r := range steeringRows(t, s) {
		if r.DeliveredAt != "" {
			delivered++
		}
	}
	if delivered != 11 || countEvents(t, s, string(EvSteeringDelivered)) != 4 {
		t.Fatalf("%d delivered, %d steering_delivered events; want 11 and 4", delivered,
			countEvents(t, s, string(EvSteeringDelivered)))
	}
}

func TestSteeringTextIsMarkedAdvisory(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []PromptSteering
		want []string
	}{
		{"none", nil, nil},
		{"two", []PromptSteering{{ID: "steer_a", Text: "old"}, {ID: "steer_b", New: true, Text: "line 1\nline 2"}},
			[]string{SteeringAuthority, `"id":"steer_a"`, `"new":true`, `line 1\nline 2`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := steeringText(tc.msgs)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil && got != "" {
				t.Fatalf("no guidance gives %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Fatalf("guidance text %q lacks %q", got, w)
				}
			}
			if n := strings.Count(got, "\n- "); n != len(tc.msgs) {
				t.Fatalf("%d entries in %q; want one line each", n, got)
			}
		})
	}
}

// A review packet carries every message, delivered or not; status lists
// them with delivered_at.
func TestPacketAndSnapshotCarryAllSteering(t *testing.T) {
	c, s := newTestStudy(t, nil)
	sv := &Supervisor{c: c, s: s, Bus: NewBus()}
	p, err := sv.buildPacket(context.Background(), Review{Claim: "root"}, map[string]Claim{})
	if err != nil || p.Steering == nil || len(p.Steering) != 0 {
		t.Fatalf("packet without guidance: %v, %v; want an empty list", p.Steering, err)
	}
	queueN(t, c, 1, 9)
	if _, _, _, _, err := sv.turnStart(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err = sv.buildPacket(context.Background(), Review{Claim: "root"}, map[string]Claim{})
	if err != nil || len(p.Steering) != 9 || p.Steering[0].Text != "guidance 1" || p.Steering[8].Text != "guidance 9" {
		t.Fatalf("packet carries %d messages, %v; want all 9 in order", len(p.Steering), err)
	}
	snap, err := LoadSnapshot(context.Background(), c, s)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range snap.Steering {
		if delivered := m.DeliveredAt != nil; delivered != (i < promptNewSteering) {
			t.Fatalf("status: message %d delivered_at %v", i+1, m.DeliveredAt)
		}
	}
	if len(snap.Steering) != 9 {
		t.Fatalf("status lists %d messages; want 9", len(snap.Steering))
	}
}
