package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// checkWorkerCleaned: after a study on the worker, no job folder is left
// under ROOT/state/jobs, and each collected job left its small record.
func checkWorkerCleaned(t *testing.T, root string, experiments int) {
	t.Helper()
	jobs, err := os.ReadDir(filepath.Join(root, "state", "jobs"))
	if err != nil || len(jobs) != 0 {
		t.Errorf("job folders left on the worker after their outputs were collected: %v (%v)", jobs, err)
	}
	records, err := os.ReadDir(filepath.Join(root, "state", "collected"))
	if err != nil || len(records) < experiments {
		t.Errorf("collected records on the worker: %d (%v), want at least %d", len(records), err, experiments)
	}
	blobs, _ := os.ReadDir(filepath.Join(root, "state", "blobs"))
	if len(blobs) != 0 {
		t.Errorf("input blobs left on the worker no job names: %v", blobs)
	}
}

// TestWorkerPoolUnreachable: with the pool's only worker down, the
// replicate the agent queues waits, and status names the unreachable
// worker (pool_unreachable); once its sshd is back, the worker is
// reachable again (pool_recovered) and the replicate runs there.
func TestWorkerPoolUnreachable(t *testing.T) {
	t.Parallel()
	w := startWorkerStudy(t, "kill", 60, []string{"SIMJECTURE_WORKER_ORPHAN_GRACE=4"}, "lo")
	s, root, c, b := w.s, w.root, w.c, w.b
	s.stop()
	for _, pid := range procsWith(filepath.Join(root, "bin")) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); filepath.Base(exe) != "ssh" {
			_ = syscall.Kill(pid, syscall.SIGKILL) // the worker's serve and daemon
		}
	}
	waitFor(t, 90*time.Second, "status to name the unreachable worker", func() bool {
		return slices.Equal(status(t, c.dir).UnreachableWorkers, []string{"lo"})
	})
	if retry, ok := firstByKey(status(t, c.dir), "retry-1"); !ok || retry.Status != "queued" {
		t.Errorf("the replicate while the pool is down: %+v (found %v), want queued", retry, ok)
	}
	s.start(t)
	if r := b.wait(t, 120*time.Second); r.code != 0 {
		t.Errorf("the study after the worker recovered: %s", r)
	}
	snap := status(t, c.dir)
	retry, _ := firstByKey(snap, "retry-1")
	if snap.Status != "completed" || len(snap.UnreachableWorkers) != 0 || retry.Status != "succeeded" || retry.Machine != "lo" {
		t.Errorf("after recovery: %s, unreachable %v, replicate %+v; want completed, none and succeeded on lo", snap.Status, snap.UnreachableWorkers, retry)
	}
	r := sj(t, "", "watch", "--campaign", c.dir, "--jsonl")
	for _, typ := range []string{`"pool_unreachable"`, `"pool_recovered"`} {
		if strings.Count(r.stdout, typ) != 1 {
			t.Errorf("events of type %s: %d, want 1", typ, strings.Count(r.stdout, typ))
		}
	}
}

// TestWorkerExperimentInProcessMonitor: a read-only TUI on a study whose
// experiment runs on the worker shows it in the process monitor, named by
// its machine, host and job, with "remote" for the figures not sampled here.
func TestWorkerExperimentInProcessMonitor(t *testing.T) {
	t.Parallel()
	w := startWorkerStudy(t, "busy", 20, nil, "lo")
	scr := tuiScreenSized(t, 160, 40, tuiEnv(), bin, "tui", "--campaign", w.c.dir, "--read-only")
	got := scr.waitText(30*time.Second, "⟨on lo · 127.0.0.1 · job_", "remote")
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "⟨on lo") && !strings.Contains(line, "remote") {
			t.Errorf("the remote row shows figures it cannot know: %q", line)
		}
	}
	scr.keys("q")
	stopStudy(t, w.s, w.c, w.b)
}
