package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// startingRun models a run whose start races the study's pause: it tells
// the test it is starting, waits until the pause cancels it and then, as
// sandbox.Run does, refuses to start with the context's error.
func startingRun(starting chan<- struct{}) RunFunc {
	return func(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
		starting <- struct{}{}
		<-ctx.Done()
		return sandbox.Result{Backend: spec.Backend}, fmt.Errorf("%w: start: %w", sandbox.ErrHelper, ctx.Err())
	}
}

// TestPauseBeforeStartIsInterrupted pauses and resumes a study 30 times, each
// time while an experiment is starting: no receipt may end failed with the
// context's error, every one is interrupted.
func TestPauseBeforeStartIsInterrupted(t *testing.T) {
	const rounds = 30
	c, s := newTestStudy(t, nil)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	for round := range rounds {
		starting := make(chan struct{}, 1)
		agent := &fakeAgent{review: approve, worker: func(int) provider.Outcome {
			args := fmt.Sprintf(`{"source":"sim.py","outputs":["r.json"],"key":"round-%d"}`, round)
			if _, err := lab.Call(context.Background(), "run", []byte(args)); err != nil {
				t.Error(err)
			}
			return provider.Outcome{}
		}}
		sv, err := Open(context.Background(), c, agent, Options{Run: startingRun(starting), Cores: 2})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			select {
			case <-starting:
			case <-time.After(20 * time.Second):
			}
			sv.Stop(StatusPaused)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		final, err := sv.Run(ctx)
		cancel()
		_ = sv.Close()
		if err != nil || final != StatusPaused {
			t.Fatalf("round %d: %s %v", round, final, err)
		}
	}
	counts := map[ExpStatus]int{}
	cancelled := 0
	_ = s.Read(context.Background(), func(tx *store.Tx) error {
		all, err := listDocs[Receipt](tx, store.Experiments)
		for _, r := range all {
			counts[r.Status]++
			if r.Status == ExpFailed && strings.Contains(r.Error, "context canceled") {
				cancelled++
			}
		}
		return err
	})
	t.Logf("receipts after %d pauses: %v", rounds, counts)
	if cancelled > 0 || counts[ExpInterrupted] != rounds {
		t.Fatalf("%d of %d receipts failed with the context's error; want all %d interrupted: %v",
			cancelled, rounds, rounds, counts)
	}
}

// TestRunnerLostIsInterrupted: a run the sandbox runner ended (killed, or
// told to stop) is recorded interrupted with the reason, never as the
// experiment's own failure; the study goes on.
func TestRunnerLostIsInterrupted(t *testing.T) {
	c, s := newTestStudy(t, nil)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	lost := func(_ context.Context, spec sandbox.Spec) (sandbox.Result, error) {
		return sandbox.Result{Backend: spec.Backend}, fmt.Errorf("%w: %w: runner exited: signal: killed", sandbox.ErrHelper, sandbox.ErrRunnerLost)
	}
	var id string
	agent := &fakeAgent{review: approve, worker: func(n int) provider.Outcome {
		if n == 1 {
			got, err := lab.Call(context.Background(), "run", []byte(`{"source":"sim.py","outputs":["r.json"]}`))
			if err != nil {
				t.Error(err)
			} else {
				id = got.(Receipt).ID
			}
			return provider.Outcome{}
		}
		if r, _ := lab.receipt(context.Background(), id); r.Status != ExpQueued && r.Status != ExpRunning {
			if _, err := RequestControl(context.Background(), c, Pause); err != nil {
				t.Error(err)
			}
		}
		return provider.Outcome{}
	}}
	if final, _ := runSupervisor(t, c, agent, Options{Run: lost, IdlePause: func(int) time.Duration { return 0 }}); final != StatusPaused {
		t.Fatalf("final %s, want paused", final)
	}
	r, err := lab.receipt(context.Background(), id)
	if err != nil || r.Status != ExpInterrupted || !strings.Contains(r.Error, "runner") {
		t.Fatalf("receipt %s: %s %q (%v); want interrupted naming the runner", id, r.Status, r.Error, err)
	}
}
