package machine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		os.Exit(sandbox.HelperMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// testWorker is a daemon served in this process, over a pipe instead of ssh.
type testWorker struct {
	d   *daemon
	m   *sshMachine
	dir string
}

func newTestWorker(t *testing.T, grace time.Duration) *testWorker {
	t.Helper()
	if rep := sandbox.Probe(context.Background(), sandbox.Bubblewrap); !rep.Available {
		t.Skipf("bubblewrap is unavailable here: %s", rep.Reason)
	}
	dir := t.TempDir()
	self, _ := os.Executable()
	d := &daemon{root: stateDir(filepath.Join(dir, "root")), grace: grace, self: self, jobs: map[string]*job{},
		probes: map[sandbox.Backend]sandbox.Report{}, log: slog.New(slog.NewTextHandler(io.Discard, nil)), idleFrom: time.Now()}
	for _, sub := range []string{"run", "jobs", "blobs", "runs", "collected"} {
		if err := ensurePrivateDir(filepath.Join(d.root, sub)); err != nil {
			t.Fatal(err)
		}
	}
	w := &testWorker{d: d, dir: dir, m: &sshMachine{p: validSSH(), t: sshTarget{p: validSSH()}}}
	w.connect(t)
	// Settle before the folder goes: the jobs' run folders are removed
	// (or made spares) in the background.
	t.Cleanup(func() { _ = w.m.Close(); d.wg.Wait(); sandbox.Settle() })
	return w
}

// connect attaches a new session to the daemon.
func (w *testWorker) connect(t *testing.T) {
	t.Helper()
	client, server := net.Pipe()
	if !w.d.track(server, true) {
		t.Fatal("the daemon is stopping")
	}
	w.d.attach(+1)
	w.d.wg.Go(func() {
		defer w.d.attach(-1)
		defer w.d.track(server, false)
		w.d.session(server)
	})
	s := newSession(w.m.t, nil, client)
	go s.read(client)
	if err := s.greet(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.m.sess = s
}

// spec is a sealed script writing its output under bubblewrap.
func (w *testWorker) spec(t *testing.T, script string) sandbox.Spec {
	t.Helper()
	src := filepath.Join(w.dir, "t.sh")
	if err := os.WriteFile(src, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, _, _ := sandbox.HashFile(src)
	return sandbox.Spec{Sealed: []sandbox.SealedFile{{Rel: "t.sh", HostPath: src, SHA256: sum}},
		Command: []string{"sh", "/work/t.sh"}, Outputs: []string{"out.txt"}, Timeout: 30 * time.Second, CPUs: 1,
		ArtifactDir: filepath.Join(w.dir, "artifacts")}
}

// TestDaemonRunsAndIsIdempotent: a job runs under the worker's sandbox, its
// outputs arrive hash-checked, and the same request again returns the same
// outcome without running it twice; the same id with another request is
// refused.
func TestDaemonRunsAndIsIdempotent(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, time.Minute)
	spec := w.spec(t, "echo $$ > out.txt\n")
	ctx := context.Background()
	res, _, err := w.m.Run(ctx, "job_a", spec)
	if err != nil || res.ReturnCode == nil || *res.ReturnCode != 0 || res.Backend != sandbox.Bubblewrap {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	sum, _, err := sandbox.HashFile(filepath.Join(spec.ArtifactDir, "out.txt"))
	if err != nil || sum != res.Artifacts["out.txt"].SHA256 {
		t.Fatalf("fetched out.txt hashes %s (%v), recorded %s", sum, err, res.Artifacts["out.txt"].SHA256)
	}
	again, _, err := w.m.Run(ctx, "job_a", spec)
	if err != nil || again.Artifacts["out.txt"] != res.Artifacts["out.txt"] || !again.StartedAt.Equal(res.StartedAt) {
		t.Errorf("the same request again = %+v, %v; want the first outcome", again, err)
	}
	spec.Command = []string{"sh", "-c", "true"}
	if _, _, err := w.m.Run(ctx, "job_a", spec); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "different request") {
		t.Errorf("the same id with another request = %v", err)
	}
}

// TestDaemonRefusesCorruptInput: an upload whose bytes do not hash to the
// declared sha256 is discarded and refused.
func TestDaemonRefusesCorruptInput(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, time.Minute)
	spec := w.spec(t, ": > out.txt\n")
	spec.Sealed[0].SHA256 = strings.Repeat("ab", 32)
	_, _, err := w.m.Run(context.Background(), "job_b", spec)
	if err == nil || !strings.Contains(err.Error(), "hash") {
		t.Errorf("Run with a corrupt input = %v, want a hash refusal", err)
	}
	if _, err := os.Stat(w.d.blobPath(strings.Repeat("ab", 32))); err == nil {
		t.Error("the corrupt blob was kept")
	}
}

// TestDaemonStopsOrphans: with no session attached for the grace, a
// running job is stopped and recorded lost with the reason; a new session
// learns it.
func TestDaemonStopsOrphans(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, 300*time.Millisecond)
	spec := w.spec(t, "sleep 30; : > out.txt\n")
	req, _ := jobRequest("job_c", sandbox.Bubblewrap, spec)
	a := &attempt{m: w.m, req: req, spec: spec}
	var cr createReply
	ctx := context.Background()
	if err := w.m.sess.call(ctx, opCreate, req, &cr); err != nil {
		t.Fatal(err)
	}
	if _, err := a.stage(ctx, w.m.sess, cr.Missing); err != nil {
		t.Fatal(err)
	}
	_ = w.m.Close()
	go w.d.watchIdle(t.Context(), nopListener{})
	w.d.mu.Lock()
	j := w.d.jobs["job_c"]
	w.d.mu.Unlock()
	select {
	case <-j.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the orphaned job was not stopped")
	}
	w.connect(t)
	_, _, err := w.m.Run(ctx, "job_c", spec)
	if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "orphaned") {
		t.Errorf("re-attaching to the orphan = %v, want ErrLost with the reason", err)
	}
}

// nopListener stands in for the daemon's listener in watchIdle.
type nopListener struct{ net.Listener }

func (nopListener) Close() error { return nil }

// TestDaemonStopsOnSignal: when the daemon's context ends (the CLI's
// SIGTERM or SIGINT), serve stops the running job and records it lost with
// the reason, ends the sessions and returns once the job has ended; a job
// staged meanwhile never starts: it is recorded lost with the reason.
func TestDaemonStopsOnSignal(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, time.Minute)
	spec := w.spec(t, "sleep 30; : > out.txt\n")
	ctx := context.Background()
	for _, id := range []string{"job_run", "job_staged"} {
		req, _ := jobRequest(id, sandbox.Bubblewrap, spec)
		var cr createReply
		if err := w.m.sess.call(ctx, opCreate, req, &cr); err != nil {
			t.Fatal(err)
		}
		if id == "job_run" {
			a := &attempt{m: w.m, req: req, spec: spec}
			if st, err := a.stage(ctx, w.m.sess, cr.Missing); err != nil || st.Status != jobRunning {
				t.Fatalf("start = %+v, %v", st, err)
			}
		}
	}
	sig, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.d.serve(sig) }()
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return after its context ended")
	}
	w.d.mu.Lock()
	run, staged := w.d.jobs["job_run"], w.d.jobs["job_staged"]
	w.d.mu.Unlock()
	if st := run.snapshot(); st.Status != jobLost || !strings.Contains(st.Reason, "SIGTERM") {
		t.Errorf("the running job = %s (%q), want lost with the reason", st.Status, st.Reason)
	}
	select {
	case <-run.done:
	default:
		t.Error("serve returned before the running job ended")
	}
	body, _ := json.Marshal(jobArgs{ID: "job_staged"})
	if st, err := w.d.start(frame{Body: body}); err != nil || st.Status != jobLost || !strings.Contains(st.Reason, "SIGTERM") {
		t.Errorf("a start after the shutdown = %+v, %v; want the job lost with the reason, never run", st, err)
	}
	if staged.active() {
		t.Error("the staged job runs")
	}
}
