package engine

import (
	"testing"
	"time"
)

func TestRemoteSamplesListOnlyRunningWorkerExperiments(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	started := now.Add(-95 * time.Second)
	remote := &Remote{Host: "10.0.0.7", Job: "job_ab"}
	receipts := []Receipt{
		{ID: "exp_local", Status: ExpRunning, Machine: "local", Source: "a.py", StartedAt: &started},
		{ID: "exp_done", Status: ExpSucceeded, Machine: "w1", Remote: remote, Source: "b.py", StartedAt: &started},
		{ID: "exp_run", Status: ExpRunning, Machine: "w1", Remote: remote, Source: "c.py", StartedAt: &started, IsolationBackend: "bubblewrap"},
		{ID: "exp_cap", Status: ExpRunning, Machine: "w2", Remote: remote, Capability: "julia"},
	}
	got := RemoteSamples(receipts, now)
	if len(got) != 2 {
		t.Fatalf("rows = %d, want 2 (the running worker experiments): %+v", len(got), got)
	}
	run := got[0]
	if run.Experiment != "exp_run" || run.Remote == nil || run.Remote.Machine != "w1" || run.Remote.Job != "job_ab" ||
		run.Remote.Host != "10.0.0.7" || run.Elapsed != 95*time.Second || run.Command != "c.py" || run.PID != 0 ||
		run.Role != RoleExperiment || run.Backend != "bubblewrap" {
		t.Fatalf("row = %+v", run)
	}
	if got[1].Command != "julia" || got[1].Elapsed != 0 || got[1].Remote.Machine != "w2" {
		t.Fatalf("capability row without a start = %+v", got[1])
	}
}
