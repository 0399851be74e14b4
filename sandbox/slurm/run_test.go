package slurm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// TestRunCompletesAsOneJob runs one experiment as a real Slurm job: it
// reports queued then running on the node, and its output comes back into
// the artifact folder with the hash the job recorded; a second Run of the
// same key (a restarted supervisor) returns the record without a new job.
func TestRunCompletesAsOneJob(t *testing.T) {
	tc := startCluster(t, "")
	c := newTestCluster(t, tc, nil)
	j := shJob(t, "study-1/exp_a", "echo \"node $SIMJECTURE_EXPERIMENT\" > result.txt\n", time.Minute)
	var mu sync.Mutex
	var seen []Progress
	j.Progress = func(p Progress) { mu.Lock(); seen = append(seen, p); mu.Unlock() }
	o, err := c.Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "" || o.Result.ReturnCode == nil || *o.Result.ReturnCode != 0 {
		t.Fatalf("outcome %+v (reason %q), want a clean exit", o.Result, o.Reason)
	}
	t.Logf("outcome %+v remote %+v", o.Result, o.Remote)
	if o.Remote.Scheduler != Scheduler || o.Remote.Job == "" || o.Remote.Node != tc.Node {
		t.Fatalf("remote %+v, want slurm, a job id and node %s", o.Remote, tc.Node)
	}
	a, ok := o.Result.Artifacts["result.txt"]
	got, _, herr := sandbox.HashFile(filepath.Join(j.Spec.ArtifactDir, "result.txt"))
	if !ok || herr != nil || got != a.SHA256 {
		t.Fatalf("artifact %+v, collected hash %s (%v)", a, got, herr)
	}
	mu.Lock()
	if len(seen) == 0 || seen[len(seen)-1].Remote.Job != o.Remote.Job {
		t.Errorf("progress %+v, want the job's states", seen)
	}
	mu.Unlock()
	again, err := newTestCluster(t, tc, nil).Run(context.Background(), j)
	if err != nil || again.Remote.Job != o.Remote.Job {
		t.Fatalf("second run: %+v, %v; want the recorded job %s", again.Remote, err, o.Remote.Job)
	}
	if n := strings.Count(tc.client(t, "squeue", "-h", "--states=all", "-o", "%i"), "\n"); n != 1 {
		t.Fatalf("%d jobs in squeue, want the one", n)
	}
}

// TestRunStopsAndInterprets covers the ways a job ends other than by
// itself: each row starts a long experiment and stops it when it runs.
func TestRunStopsAndInterprets(t *testing.T) {
	tc := startCluster(t, "")
	cases := []struct {
		name       string
		margin     time.Duration // added to the 5 min timeout for --time; 0 = the default
		stop       func(c *Cluster, job string, cancel context.CancelFunc)
		status     string
		cancelled  bool
		reasonPart string
	}{
		{"scancel from outside", 0, func(_ *Cluster, job string, _ context.CancelFunc) { tc.client(t, "scancel", job) },
			Cancelled, false, "cancelled outside the study"},
		// Slurm rounds the limit up to a minute and checks limits every 30 s.
		{"its own --time", -5*time.Minute + time.Second, func(*Cluster, string, context.CancelFunc) {},
			TimedOut, false, "killed by its time limit"},
		{"study cancel", 0, func(_ *Cluster, _ string, cancel context.CancelFunc) { cancel() }, "", true, ""},
	}
	for i, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCluster(t, tc, func(cfg *Config) { cfg.TimeMargin = tt.margin })
			o := runUntilRunning(t, c, shJob(t, "study-2/exp_"+string(rune('a'+i)), "sleep 300\n", 5*time.Minute), tt.stop)
			if o.Status != tt.status || (tt.status == "" && o.Result.Cancelled != tt.cancelled) || !strings.Contains(o.Reason, tt.reasonPart) {
				t.Fatalf("outcome status %q cancelled %v reason %q; want %q %v %q", o.Status, o.Result.Cancelled, o.Reason, tt.status, tt.cancelled, tt.reasonPart)
			}
			if active := tc.client(t, "squeue", "-h", "-o", "%i"); strings.TrimSpace(active) != "" {
				t.Fatalf("jobs still in squeue: %q", active)
			}
		})
	}
}

// runUntilRunning runs j and calls stop once the job runs on its node.
func runUntilRunning(t *testing.T, c *Cluster, j Job, stop func(*Cluster, string, context.CancelFunc)) Outcome {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	running := make(chan string, 1)
	j.Progress = func(p Progress) {
		if p.State == "RUNNING" {
			select {
			case running <- p.Remote.Job:
			default:
			}
		}
	}
	done := make(chan Outcome, 1)
	errs := make(chan error, 1)
	go func() {
		o, err := c.Run(ctx, j)
		done <- o
		errs <- err
	}()
	select {
	case job := <-running:
		waitFor(t, 90*time.Second, "the experiment to start", func() bool { return started(c, j) })
		stop(c, job, cancel)
	case o := <-done:
		t.Fatalf("finished before running: %+v %v", o, <-errs)
	case <-time.After(60 * time.Second):
		t.Fatal("the job did not run within 60 s")
	}
	select {
	case o := <-done:
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		return o
	case <-time.After(150 * time.Second):
		t.Fatal("Run did not return within 150 s of the stop")
	}
	return Outcome{}
}

// started reports whether j's job has its experiment running: the
// sandbox's stdout log exists only once the run began.
func started(c *Cluster, j Job) bool {
	_, err := os.Stat(filepath.Join(c.folderFor(j.Key).dir, outDir))
	return err == nil
}

// TestBackendUnavailableOnNodeFails asks for a cooperative backend, which
// the job (root on the test node) cannot use: the job's own probe fails
// the experiment with the probe's reason, and nothing runs weaker.
func TestBackendUnavailableOnNodeFails(t *testing.T) {
	tc := startCluster(t, "")
	if os.Geteuid() != 0 {
		t.Skip("the test node refuses proot-cooperative only to root")
	}
	c := newTestCluster(t, tc, func(cfg *Config) { cfg.Backend = sandbox.ProotCooperative })
	j := shJob(t, "study-4/exp_weak", "echo ran > result.txt\n", time.Minute)
	j.Spec.Backend = sandbox.ProotCooperative
	o, err := c.Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != Failed || !strings.Contains(o.Reason, "proot-cooperative is unavailable on node "+tc.Node) {
		t.Fatalf("outcome %q %q, want failed with the node's probe", o.Status, o.Reason)
	}
	if _, err := os.Stat(filepath.Join(j.Spec.ArtifactDir, "result.txt")); err == nil {
		t.Fatal("the experiment ran anyway")
	}
}
