package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// forgeRootSupported writes the root claim as supported straight into the
// store, with the record event that keeps the hash chain whole: no verdict
// accepted it.
func forgeRootSupported(t testing.TB, s *store.Store) {
	t.Helper()
	err := s.Tx(context.Background(), func(tx *store.Tx) error {
		return putClaim(tx, Claim{ID: RootClaim, Statement: "forged", Status: "supported", CreatedAt: time.Now().UTC()})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestForgedClaimNeverCompletesTheStudy: a claim status forged into the
// store under a running supervisor stops the study as
// paused_external_error (category record) instead of completing it, and a
// resume of it is refused with the finding.
func TestForgedClaimNeverCompletesTheStudy(t *testing.T) {
	c, s := newTestStudy(t, func(r *Request) { r.CompletionPolicy = "answer" })
	agent := &fakeAgent{review: approve, worker: func(int) provider.Outcome {
		forgeRootSupported(t, s)
		return provider.Outcome{}
	}}
	final, _ := runSupervisor(t, c, agent, Options{})
	snap, _ := LoadSnapshot(context.Background(), c, s)
	if final != StatusPausedExternalError || snap.Status != StatusPausedExternalError {
		t.Fatalf("final %s, status %s; want paused_external_error", final, snap.Status)
	}
	p := snap.Provider
	if p.ErrorCategory == nil || *p.ErrorCategory != CategoryRecord || p.Attention == nil || !strings.Contains(*p.Attention, "claim root") {
		t.Fatalf("provider %+v; want category record and an attention naming claim root", p)
	}

	sv, err := Open(context.Background(), c, agent, Options{Run: fakeRun})
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	final, err = sv.Run(context.Background())
	if final != StatusPausedExternalError || err == nil || !strings.Contains(err.Error(), "claim root") {
		t.Fatalf("resume of a forged record: %s, %v; want paused_external_error and the finding", final, err)
	}
	if agent.turns != 1 {
		t.Errorf("%d agent turns; the refused resume must run none", agent.turns)
	}
}

// TestRunningReceiptsAreSettled: a receipt still running when no process
// runs it (its supervisor died, or its final write failed) is recorded,
// with its event, by whoever takes the lock next: interrupted by a
// supervisor starting and by a pause, cancelled by a cancel.
func TestRunningReceiptsAreSettled(t *testing.T) {
	cases := []struct {
		name  string
		apply func(t *testing.T, c Campaign)
		want  ExpStatus
		event EventType
	}{
		{"supervisor starts", startAndPause, ExpInterrupted, EvExperimentInterrupted},
		{"pause offline", offline(Pause), ExpInterrupted, EvExperimentInterrupted},
		{"cancel offline", offline(Cancel), ExpCancelled, EvExperimentFinished},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			left := Receipt{ID: "exp_left", Status: ExpRunning, Source: "sim.py", CreatedAt: time.Now().UTC()}
			if err := s.Tx(context.Background(), func(tx *store.Tx) error { _, err := putReceipt(tx, left); return err }); err != nil {
				t.Fatal(err)
			}
			tc.apply(t, c)
			snap, _ := LoadSnapshot(context.Background(), c, s)
			if len(snap.Experiments) != 1 || snap.Experiments[0].Status != tc.want || snap.Experiments[0].Error == "" {
				t.Fatalf("receipts %+v; want exp_left %s with a reason", snap.Experiments, tc.want)
			}
			if n := countEvents(t, s, string(tc.event)); n != 1 {
				t.Errorf("%d %s events, want 1", n, tc.event)
			}
			if findings, err := Verify(context.Background(), c, s); err != nil || len(findings) != 0 {
				t.Errorf("verify: %v %v", findings, err)
			}
		})
	}
}

func startAndPause(t *testing.T, c Campaign) {
	agent := &fakeAgent{review: approve, worker: func(int) provider.Outcome {
		if _, err := RequestControl(context.Background(), c, Pause); err != nil {
			t.Error(err)
		}
		return provider.Outcome{}
	}}
	if final, _ := runSupervisor(t, c, agent, Options{}); final != StatusPaused {
		t.Fatalf("final %s, want paused", final)
	}
}

func offline(cmd Command) func(t *testing.T, c Campaign) {
	return func(t *testing.T, c Campaign) {
		if _, err := RequestControl(context.Background(), c, cmd); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOfflineControlKillsLeftRuns: a process of the campaign's run folders
// still alive when no supervisor is (its runner not yet done killing it)
// is killed before a pause or cancel is applied.
func TestOfflineControlKillsLeftRuns(t *testing.T) {
	c, _ := newTestStudy(t, nil)
	work := filepath.Join(c.Scratch(), "exp_left", "work")
	cmd := exec.Command("sleep", "60")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Dir = work
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	if got := runProcesses("/proc", c.Scratch()+"/"); len(got) != 1 || got[0] != cmd.Process.Pid {
		t.Fatalf("run processes %v, want [%d]", got, cmd.Process.Pid)
	}
	if _, err := RequestControl(context.Background(), c, Cancel); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if err == nil {
			t.Fatal("the left run exited by itself")
		}
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the left run still runs after the cancel")
	}
}

// BenchmarkCheckConsistency1000 measures the record check on a study of
// 1,000 experiments (each with its receipt's record events).
func BenchmarkCheckConsistency1000(b *testing.B) {
	_, s := newTestStudy(b, nil)
	err := s.Tx(context.Background(), func(tx *store.Tx) error {
		for i := range 1000 {
			r := Receipt{ID: fmt.Sprintf("exp_%04d", i), Status: ExpQueued, Source: "sim.py", CreatedAt: time.Now().UTC()}
			for _, st := range []ExpStatus{ExpQueued, ExpRunning, ExpSucceeded} {
				r.Status = st
				if _, err := putReceipt(tx, r); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if f, err := CheckConsistency(context.Background(), s); err != nil || len(f) != 0 {
			b.Fatal(f, err)
		}
	}
}
