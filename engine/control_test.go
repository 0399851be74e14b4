package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/simjecture/simjecture/store"
)

// lastEvent is the newest event of the study's log.
func lastEvent(t *testing.T, s *store.Store) store.Event {
	t.Helper()
	var head store.Event
	if err := s.Read(context.Background(), func(tx *store.Tx) (err error) { head, err = tx.Head(); return err }); err != nil {
		t.Fatal(err)
	}
	return head
}

// TestRequestControlWithoutSupervisor: with no supervisor a command takes
// effect at once and says so with a study_state event; a command that
// does not stop a study (the TUI's resume) is refused.
func TestRequestControlWithoutSupervisor(t *testing.T) {
	cases := []struct {
		cmd     Command
		want    Status
		wantErr error
	}{
		{Pause, StatusPaused, nil},
		{Cancel, StatusCancelled, nil},
		{Command("resume"), "", ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(string(tc.cmd), func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			got, err := RequestControl(context.Background(), c, tc.cmd)
			if !errors.Is(err, tc.wantErr) || got != tc.want {
				t.Fatalf("RequestControl(%s) = %q, %v; want %q, %v", tc.cmd, got, err, tc.want, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			ev := lastEvent(t, s)
			var p StudyStatePayload
			if err := json.Unmarshal(ev.Payload, &p); err != nil || EventType(ev.Type) != EvStudyState || p.Status != tc.want {
				t.Fatalf("last event %s %s (%v); want study_state with status %s", ev.Type, ev.Payload, err, tc.want)
			}
		})
	}
}

// TestRequestControlWhenTheSocketClosesUnanswered: a lab socket that
// accepts the request and closes without an answer (a supervisor stopping,
// or dying) does not fail the command: it is recorded as when no
// supervisor answers.
func TestRequestControlWhenTheSocketClosesUnanswered(t *testing.T) {
	c, s := newTestStudy(t, nil)
	ln := listenLab(c)
	if ln == nil {
		t.Skip("no abstract unix sockets here")
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			_ = conn.Close() // closes without an answer
		}
	}()
	got, err := RequestControl(context.Background(), c, Pause)
	if err != nil || got != StatusPaused {
		t.Fatalf("RequestControl(pause) = %q, %v; want %q", got, err, StatusPaused)
	}
	var p StudyStatePayload
	if ev := lastEvent(t, s); json.Unmarshal(ev.Payload, &p) != nil || p.Status != StatusPaused {
		t.Fatalf("last event %s %s; want study_state paused", ev.Type, ev.Payload)
	}
}
