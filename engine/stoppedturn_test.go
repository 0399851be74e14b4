package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// pausingAgent writes its turn's folder as a provider does, then, on the
// turn of role stopRole it is told to stop at, asks the study to pause and
// waits until the supervisor stops the turn. Every other turn goes to the
// inner agent.
type pausingAgent struct {
	inner    provider.Agent
	c        Campaign
	stopRole string
	stopped  bool
}

func (a *pausingAgent) Name() string { return "pausing" }

func (a *pausingAgent) RunTurn(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
	if t.Role != a.stopRole || a.stopped {
		return a.inner.RunTurn(ctx, t)
	}
	a.stopped = true
	for rel, body := range map[string]string{"prompt.txt": t.Prompt, "stdout.log": "half a verdict\n", "stderr.log": "working\n"} {
		if err := os.WriteFile(filepath.Join(t.LogDir, rel), []byte(body), 0o644); err != nil {
			return provider.Outcome{}, err
		}
	}
	if _, err := RequestControl(ctx, a.c, Pause); err != nil {
		return provider.Outcome{}, err
	}
	<-ctx.Done() // the supervisor stops the turn at its next boundary
	return provider.Outcome{}, nil
}

// stoppedTurnEvents returns the turn_ended events that name a stop.
func stoppedTurnEvents(t *testing.T, s *store.Store) []TurnEndedPayload {
	t.Helper()
	var out []TurnEndedPayload
	err := s.Read(context.Background(), func(tx *store.Tx) error {
		evs, err := tx.EventsAfter(0, 100000)
		for _, ev := range evs {
			var p TurnEndedPayload
			if ev.Type == string(EvTurnEnded) && json.Unmarshal(ev.Payload, &p) == nil && p.Stopped != "" {
				out = append(out, p)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStoppedTurnLogsAreHashed pauses the study in the middle of a worker
// turn and of a review attempt: each stopped turn records its folder's
// hashes (the review attempt's folder moved aside first, since its next
// attempt has the same name), the study then resumes to completion, and an
// edit of a stopped turn's log is a verify finding.
func TestStoppedTurnLogsAreHashed(t *testing.T) {
	tests := []struct {
		role, rel, since string
		files            int
	}{
		{provider.RoleWorker, "supervisor/turn-00001/stdout.log", "its turn ended", 3},
		// rel: in the review's folder, found below; the packet is a fourth file
		{provider.RoleReviewer, "", "its review attempt ended", 4},
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			c, s := newTestStudy(t, func(r *Request) { r.CompletionPolicy = "answer" })
			agent := &pausingAgent{c: c, stopRole: tt.role, inner: &loggingAgent{Agent: &fakeAgent{worker: reviewOnce(t, c, s), review: approve}}}
			opt := Options{IdlePause: func(int) time.Duration { return 0 }}
			if final, _ := runSupervisor(t, c, agent, opt); final != StatusPaused {
				t.Fatalf("final %s, want paused", final)
			}
			stopped := stoppedTurnEvents(t, s)
			if len(stopped) != 1 || stopped[0].Stopped != string(StatusPaused) || len(stopped[0].Logs) != tt.files {
				t.Fatalf("stopped turns recorded: %+v; want one, paused, with its %d files", stopped, tt.files)
			}
			rel := tt.rel
			if tt.role == provider.RoleReviewer {
				snap, err := LoadSnapshot(context.Background(), c, s)
				if err != nil || len(snap.Reviews) != 1 || stopped[0].Review != snap.Reviews[0].ID {
					t.Fatalf("reviews %+v (%v); stopped %+v", snap.Reviews, err, stopped[0])
				}
				rel = "supervisor/" + reviewDirName(snap.Reviews[0], 1) + ".interrupted-1/stdout.log"
			}
			if _, ok := stopped[0].Logs[rel]; !ok {
				t.Fatalf("the stopped turn's logs %v do not name %s", stopped[0].Logs, rel)
			}
			if final, _ := runSupervisor(t, c, agent, opt); final != StatusCompleted {
				t.Fatalf("resumed: final %s, want completed", final)
			}
			if f := verifyFindings(t, c, s); len(f) != 0 {
				t.Fatalf("verify of the untouched study: %v", f)
			}
			if err := os.WriteFile(filepath.Join(c.Dir, filepath.FromSlash(rel)), []byte("a whole verdict\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if f, want := verifyFindings(t, c, s), rel+" changed since "+tt.since; len(f) != 1 || f[0] != want {
				t.Errorf("verify after editing %s: %q, want exactly %q", rel, f, want)
			}
		})
	}
}

// TestMoveAsideTakesTheRetrySiblings: an unfinished attempt's folder and
// its retry sibling move aside together, to the first free number, so the
// next attempt's retry can make its own sibling.
func TestMoveAsideTakesTheRetrySiblings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "review-rev_1-1")
	for _, d := range []string{dir, dir + "-new-thread", dir + ".interrupted-1"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	aside, err := moveAside(dir)
	if err != nil || aside != dir+".interrupted-2" {
		t.Fatalf("moveAside = %q, %v; want %s", aside, err, dir+".interrupted-2")
	}
	for _, gone := range []string{dir, dir + "-new-thread"} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", gone, err)
		}
	}
	if _, err := os.Lstat(aside + "-new-thread"); err != nil {
		t.Errorf("the retry sibling was not moved aside with its attempt: %v", err)
	}
	if err := newAgentDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := provider.MakeNewDir(dir + "-new-thread"); err != nil {
		t.Errorf("the next attempt's retry folder: %v", err)
	}
}

// TestTurnStoppedBySignalHashesItsLogs: a supervisor stopped by a signal
// (its context cancelled, as SIGTERM does) in the middle of a worker turn
// records the turn's end with its folder's hashes too.
func TestTurnStoppedBySignalHashesItsLogs(t *testing.T) {
	c, s := newTestStudy(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopper := &signalAgent{cancel: cancel}
	sv, err := Open(context.Background(), c, stopper, Options{Run: fakeRun, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	if final, err := sv.Run(ctx); err != nil || final != StatusCancelled {
		t.Fatalf("final %s %v, want cancelled", final, err)
	}
	var ended []TurnEndedPayload
	_ = s.Read(context.Background(), func(tx *store.Tx) error {
		evs, err := tx.EventsAfter(0, 100000)
		for _, ev := range evs {
			var p TurnEndedPayload
			if ev.Type == string(EvTurnEnded) && json.Unmarshal(ev.Payload, &p) == nil {
				ended = append(ended, p)
			}
		}
		return err
	})
	if len(ended) != 1 || len(ended[0].Logs) != 1 {
		t.Fatalf("turn ends recorded: %+v; want one, with its log", ended)
	}
	if f := verifyFindings(t, c, s); len(f) != 0 {
		t.Fatalf("verify: %v", f)
	}
}

// signalAgent writes its turn's stdout.log, then ends the supervisor's
// context (as a SIGTERM would) and waits for the turn to be stopped.
type signalAgent struct{ cancel context.CancelFunc }

func (a *signalAgent) Name() string { return "signal" }

func (a *signalAgent) RunTurn(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
	if err := os.WriteFile(filepath.Join(t.LogDir, "stdout.log"), []byte("working\n"), 0o644); err != nil {
		return provider.Outcome{}, err
	}
	a.cancel()
	<-ctx.Done()
	return provider.Outcome{}, nil
}
