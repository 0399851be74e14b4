package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/store"
)

func steeringRows(t *testing.T, s *store.Store) []store.SteeringRow {
	t.Helper()
	var rows []store.SteeringRow
	err := s.Read(context.Background(), func(tx *store.Tx) error {
		var err error
		rows, err = tx.ListSteering()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestSteerChecksItsInput(t *testing.T) {
	c, s := newTestStudy(t, nil)
	for _, tc := range []struct {
		name, text, key, wantErr string
	}{
		{"empty", "  \n ", "", "empty"},
		{"too long", strings.Repeat("é", MaxSteeringChars+1), "", "at most 8000"},
		{"key too long", "try n=10", strings.Repeat("k", MaxRequestKeyChars+1), "longer than 120"},
		{"key with spaces", "try n=10", " k", "surrounding spaces"},
		{"key with a newline", "try n=10", "a\nb", "control characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Steer(context.Background(), c, tc.text, tc.key)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v; want ErrInvalid saying %q", err, tc.wantErr)
			}
		})
	}
	if rows := steeringRows(t, s); len(rows) != 0 {
		t.Fatalf("refused guidance was stored: %+v", rows)
	}
	res, err := Steer(context.Background(), c, " "+strings.Repeat("é", MaxSteeringChars)+"\n", "")
	if err != nil || len([]rune(res.Text)) != MaxSteeringChars || res.RequestKey != nil || res.DeliveredAt != nil {
		t.Fatalf("a message of exactly %d characters: %+v, %v", MaxSteeringChars, res.ID, err)
	}
}

func TestSteerRequestKeyIsIdempotent(t *testing.T) {
	c, s := newTestStudy(t, nil)
	ctx := context.Background()
	first, err := Steer(ctx, c, "prefer the exact integer check", "k1")
	if err != nil || first.Existing || first.RequestKey == nil || *first.RequestKey != "k1" {
		t.Fatalf("first: %+v, %v", first, err)
	}
	again, err := Steer(ctx, c, "prefer the exact integer check\n", "k1")
	if err != nil || !again.Existing || again.ID != first.ID || again.CreatedAt != first.CreatedAt {
		t.Fatalf("the same key and text: %+v, %v; want the stored %s", again, err, first.ID)
	}
	if _, err := Steer(ctx, c, "something else", "k1"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("another text under the key: %v; want ErrInvalid naming %s", err, first.ID)
	}
	if _, err := Steer(ctx, c, "prefer the exact integer check", ""); err != nil {
		t.Fatal(err)
	}
	if rows, n := steeringRows(t, s), countEvents(t, s, string(EvSteeringQueued)); len(rows) != 2 || n != 2 {
		t.Fatalf("%d messages and %d steering_queued events; want 2 and 2", len(rows), n)
	}
}

func TestSteerTakesAtMost64(t *testing.T) {
	c, s := newTestStudy(t, nil)
	for i := range MaxSteeringMessages {
		if _, err := Steer(context.Background(), c, fmt.Sprintf("message %d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Steer(context.Background(), c, "one more", "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "--continue-from") {
		t.Fatalf("message 65: %v; want ErrInvalid pointing at --continue-from", err)
	}
	if n := len(steeringRows(t, s)); n != MaxSteeringMessages {
		t.Fatalf("%d messages stored; want %d", n, MaxSteeringMessages)
	}
}

func TestSteerRefusedOnceTheStudyEnded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status Status
		past   bool
	}{
		{"completed", StatusCompleted, false},
		{"cancelled", StatusCancelled, false},
		{"budget exhausted", StatusBudgetExhausted, false},
		{"deadline passed", StatusPaused, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			now := time.Now().UTC()
			if tc.past {
				now = now.Add(time.Hour)
			}
			err := s.Tx(context.Background(), func(tx *store.Tx) error {
				st, err := getState(tx)
				if err != nil {
					return err
				}
				st.Status = tc.status
				if err := putState(tx, st); err != nil {
					return err
				}
				_, err = queueSteering(tx, c, "too late", "", now)
				return err
			})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "--continue-from "+c.Dir) {
				t.Fatalf("err = %v; want ErrInvalid pointing at --continue-from", err)
			}
			if rows := steeringRows(t, s); len(rows) != 0 {
				t.Fatalf("stored after the end: %+v", rows)
			}
		})
	}
}
