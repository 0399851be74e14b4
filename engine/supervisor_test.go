package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// fakeAgent runs each turn with a function, in process.
type fakeAgent struct {
	mu     sync.Mutex
	worker func(n int) provider.Outcome
	review func(packet Packet) string
	turns  int
}

func (f *fakeAgent) Name() string { return "fake" }

func (f *fakeAgent) RunTurn(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
	f.mu.Lock()
	f.turns++
	f.mu.Unlock()
	if t.Role == provider.RoleReviewer {
		var p Packet
		if err := json.Unmarshal([]byte(t.Prompt), &p); err != nil {
			return provider.Outcome{}, err
		}
		return provider.Outcome{LastLine: f.review(p)}, nil
	}
	return f.worker(t.Number), nil
}

// fakeRun "runs" an experiment by writing its declared outputs.
func fakeRun(_ context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	zero := 0
	res := sandbox.Result{Backend: spec.Backend, ReturnCode: &zero, Artifacts: map[string]sandbox.Artifact{}}
	for _, o := range spec.Outputs {
		p := filepath.Join(spec.ArtifactDir, o)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return res, err
		}
		if err := os.WriteFile(p, []byte(`{"value":1}`), 0o644); err != nil {
			return res, err
		}
		sum, n, _ := hashFile(p)
		res.Artifacts[o] = sandbox.Artifact{SHA256: sum, Bytes: n}
	}
	return res, nil
}

func runSupervisor(t *testing.T, c Campaign, agent provider.Agent, opt Options) (Status, *Supervisor) {
	t.Helper()
	if opt.Run == nil {
		opt.Run = fakeRun
	}
	opt.Cores = 2
	sv, err := Open(context.Background(), c, agent, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	final, err := sv.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return final, sv
}

// studyWorker runs one experiment, then asks for a falsification review of root.
func studyWorker(t *testing.T, c Campaign, s *store.Store) func(int) provider.Outcome {
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	return func(n int) provider.Outcome {
		ctx := context.Background()
		got, err := lab.Call(ctx, "run", []byte(`{"source":"sim.py","outputs":["r.json"]}`))
		if err != nil {
			t.Error(err)
			return provider.Outcome{}
		}
		id := got.(Receipt).ID
		if r, _ := lab.receipt(ctx, id); r.Status == ExpSucceeded {
			_, err = lab.Call(ctx, "review", []byte(fmt.Sprintf(`{"disposition":"falsified","conclusion":"it fails","experiments":[%q]}`, id)))
			if err != nil {
				t.Error(err)
			}
		}
		return provider.Outcome{}
	}
}

func approve(p Packet) string {
	return fmt.Sprintf(`{"claim_id":%q,"decision":"approved","disposition":%q,"rationale":"the recorded artifacts show it","evidence_gaps":[],"next_test":null}`, p.ClaimID, p.Disposition)
}

func TestSupervisorCompletesWithAnswerPolicy(t *testing.T) {
	c, s := newTestStudy(t, func(r *Request) { r.CompletionPolicy = "answer" })
	agent := &fakeAgent{worker: studyWorker(t, c, s), review: approve}
	// A run folder a killed supervisor left behind is removed at the start.
	left := filepath.Join(c.Scratch(), "exp-left", "work")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	final, _ := runSupervisor(t, c, agent, Options{})
	if final != StatusCompleted {
		t.Fatalf("final %s", final)
	}
	if _, err := os.Stat(filepath.Dir(left)); !os.IsNotExist(err) {
		t.Errorf("leftover run folder: %v", err)
	}
	snap, _ := LoadSnapshot(context.Background(), c, s)
	if snap.Claims[0].Status != "falsified" || snap.Reviews[0].Status != "resolved" || snap.Reviews[0].PacketSHA256 == "" {
		t.Fatalf("claims %+v reviews %+v", snap.Claims, snap.Reviews)
	}
	for _, f := range []string{"report.json", "LEDGER.md"} {
		if _, err := os.Stat(filepath.Join(c.Dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if findings, err := Verify(context.Background(), c, s); err != nil || len(findings) != 0 {
		t.Fatalf("verify: %v %v", findings, err)
	}
}

func TestSupervisorRetriesTransientFailures(t *testing.T) {
	c, s := newTestStudy(t, func(r *Request) { r.CompletionPolicy = "answer" })
	inner := studyWorker(t, c, s)
	fails := 3
	agent := &fakeAgent{review: approve, worker: func(n int) provider.Outcome {
		if fails > 0 {
			fails--
			return provider.Outcome{ExitCode: 1, Failure: provider.Classify(1, false, "HTTP 429 rate limit", nil)}
		}
		return inner(n)
	}}
	var delays []int
	final, _ := runSupervisor(t, c, agent, Options{Backoff: func(n int) time.Duration {
		delays = append(delays, int(Backoff(n).Seconds()))
		return time.Millisecond
	}})
	if final != StatusCompleted {
		t.Fatalf("final %s", final)
	}
	snap, _ := LoadSnapshot(context.Background(), c, s)
	p := snap.Provider
	if p.RetryCount != 3 || p.ConsecutiveFailures != 0 || p.NextRetryAt != nil || fmt.Sprint(delays) != "[2 4 8]" {
		t.Fatalf("provider %+v delays %v", p, delays)
	}
	if snap.Deadline != snap.CreatedAt.Add(600*time.Second) {
		t.Fatalf("deadline moved: %v", snap.Deadline)
	}
	if n := countEvents(t, s, "provider_reconnected"); n != 1 {
		t.Fatalf("provider_reconnected events: %d", n)
	}
}

func TestSupervisorPausesForTheOperator(t *testing.T) {
	cases := map[string]string{
		"401 invalid api key":                    "authentication",
		"Error code: 402 - Insufficient Balance": "quota",
		"403 model not found":                    "permission",
	}
	for stderr, want := range cases {
		t.Run(want, func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			agent := &fakeAgent{review: approve, worker: func(int) provider.Outcome {
				return provider.Outcome{ExitCode: 1, Failure: provider.Classify(1, false, stderr, nil)}
			}}
			final, _ := runSupervisor(t, c, agent, Options{})
			snap, _ := LoadSnapshot(context.Background(), c, s)
			if final != StatusPausedExternalError || snap.Provider.ErrorCategory == nil || *snap.Provider.ErrorCategory != want ||
				snap.Provider.Attention == nil || snap.Provider.RetryCount != 0 {
				t.Fatalf("final %s provider %+v", final, snap.Provider)
			}
		})
	}
}

func TestSupervisorMalformedReviewStaysQueued(t *testing.T) {
	c, s := newTestStudy(t, nil)
	agent := &fakeAgent{worker: studyWorker(t, c, s), review: func(Packet) string { return `{"decision":"approved"}` }}
	final, _ := runSupervisor(t, c, agent, Options{HarnessMax: 1})
	snap, _ := LoadSnapshot(context.Background(), c, s)
	if final != StatusPausedExternalError || len(snap.Reviews) != 1 || snap.Reviews[0].Status != "queued" ||
		snap.Reviews[0].Attempts != MaxReviewAttempts || snap.Claims[0].Status != ClaimOpen {
		t.Fatalf("final %s reviews %+v", final, snap.Reviews)
	}
}

func TestSupervisorPauseFromAnotherHandle(t *testing.T) {
	c, s := newTestStudy(t, nil)
	started := make(chan struct{})
	var once sync.Once
	agent := &fakeAgent{review: approve, worker: func(int) provider.Outcome {
		once.Do(func() { close(started) })
		return provider.Outcome{}
	}}
	done := make(chan Status, 1)
	go func() {
		final, _ := runSupervisor(t, c, agent, Options{})
		done <- final
	}()
	<-started
	at := time.Now()
	if got, err := RequestControl(context.Background(), c, Pause); err != nil || got != Requested {
		t.Fatalf("pause: %s %v", got, err)
	}
	final := <-done
	t.Logf("paused %v after the request", time.Since(at))
	if final != StatusPaused {
		t.Fatalf("final %s", final)
	}
	snap, _ := LoadSnapshot(context.Background(), c, s)
	if snap.Status != StatusPaused {
		t.Fatalf("status %s", snap.Status)
	}
}

func countEvents(t *testing.T, s *store.Store, typ string) int {
	t.Helper()
	n := 0
	_ = s.Read(context.Background(), func(tx *store.Tx) error {
		evs, err := tx.EventsAfter(0, 100000)
		for _, ev := range evs {
			if ev.Type == typ {
				n++
			}
		}
		return err
	})
	return n
}

func TestSupervisorIdleTurnsGetRecoveryAndAFreshSession(t *testing.T) {
	c, s := newTestStudy(t, nil)
	var prompts []string
	var cursors []string
	var sv *Supervisor
	agent := &fakeAgent{review: approve}
	agent.worker = func(n int) provider.Outcome {
		if n == 5 {
			sv.Stop(StatusPaused)
		}
		return provider.Outcome{Cursor: "thread-1"}
	}
	rec := &recordingAgent{inner: agent, prompts: &prompts, cursors: &cursors}
	var err error
	sv, err = Open(context.Background(), c, rec, Options{Run: fakeRun, Cores: 2,
		IdlePause: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	if _, err := sv.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(prompts) < 5 {
		t.Fatalf("only %d turns", len(prompts))
	}
	if !strings.Contains(prompts[2], "RECOVERY") {
		t.Errorf("turn 3 after two idle turns has no recovery text:\n%s", prompts[2])
	}
	// After three idle turns the cursor is dropped: turn 4 starts a fresh session with the guide.
	if cursors[3] != "" || !strings.Contains(prompts[3], "# Hypothesis") || cursors[1] != "thread-1" {
		t.Errorf("cursors %q; turn 4 prompt:\n%s", cursors, prompts[3])
	}
	if n := countEvents(t, s, "session_recovery"); n != 1 {
		t.Errorf("session_recovery events: %d", n)
	}
}

// recordingAgent records each worker turn's prompt and cursor.
type recordingAgent struct {
	inner            provider.Agent
	prompts, cursors *[]string
}

func (r *recordingAgent) Name() string { return "recording" }

func (r *recordingAgent) RunTurn(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
	if t.Role == provider.RoleWorker {
		*r.prompts = append(*r.prompts, t.Prompt)
		*r.cursors = append(*r.cursors, t.Cursor)
	}
	return r.inner.RunTurn(ctx, t)
}
