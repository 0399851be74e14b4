package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
)

// startRun runs sv in a goroutine once its worker has had a turn, and
// returns Run's result channel.
func startRun(t *testing.T, sv *Supervisor, turned chan struct{}) chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := sv.Run(context.Background())
		done <- err
	}()
	select {
	case <-turned:
	case err := <-done:
		t.Fatalf("Run returned before a turn: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no worker turn within 20 s")
	}
	return done
}

// TestRunReleasesTheStudyWhenItStops: while Run supervises, no one else
// can take the campaign lock; once a Stop (through Control) has made Run
// return, another supervisor can take it at once; Rearm and Run take it
// again, and refuse while someone else holds it.
func TestRunReleasesTheStudyWhenItStops(t *testing.T) {
	c, _ := newTestStudy(t, nil)
	turned := make(chan struct{}, 100)
	agent := &fakeAgent{review: approve, worker: func(int) provider.Outcome {
		turned <- struct{}{}
		return provider.Outcome{}
	}}
	sv, err := Open(context.Background(), c, agent, Options{Run: fakeRun, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sv.Close() })
	for round := range 2 {
		done := startRun(t, sv, turned)
		if lk, err := AcquireLock(c); !errors.Is(err, ErrLocked) {
			_ = lk.Release()
			t.Fatalf("round %d: the lock was free while Run supervised (err %v)", round, err)
		}
		final, err := Control(context.Background(), c, sv, Pause)
		if err != nil || final != StatusPaused {
			t.Fatalf("round %d: Control pause = %q, %v", round, final, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("round %d: Run: %v", round, err)
		}
		lk, err := AcquireLock(c)
		if err != nil {
			t.Fatalf("round %d: after Run returned, another supervisor is refused: %v", round, err)
		}
		_ = lk.Release()
		sv.Rearm()
	}
	lk, err := AcquireLock(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sv.Run(context.Background()); !errors.Is(err, ErrLocked) {
		t.Errorf("Run while another holds the lock: want ErrLocked, got %v", err)
	}
	_ = lk.Release()
}

// TestRunRefusesAStudyThatEndedMeanwhile: a study another process cancelled
// while this supervisor was stopped is not run again.
func TestRunRefusesAStudyThatEndedMeanwhile(t *testing.T) {
	c, _ := newTestStudy(t, nil)
	agent := &fakeAgent{review: approve, worker: func(int) provider.Outcome { return provider.Outcome{} }}
	sv, err := Open(context.Background(), c, agent, Options{Run: fakeRun, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sv.Close() })
	sv.Stop(StatusPaused)
	if final, err := sv.Run(context.Background()); err != nil || final != StatusPaused {
		t.Fatalf("Run after Stop = %q, %v", final, err)
	}
	if got, err := Control(context.Background(), c, nil, Cancel); err != nil || got != StatusCancelled {
		t.Fatalf("cancel without a supervisor = %q, %v", got, err)
	}
	sv.Rearm()
	if _, err := sv.Run(context.Background()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Run of a cancelled study: want ErrInvalid, got %v", err)
	}
	if Owned(c) {
		t.Error("a refused Run kept the lock")
	}
}
