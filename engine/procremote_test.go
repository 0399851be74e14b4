package engine

import (
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
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
	got := RemoteSamples(receipts, now, nil)
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

// TestRemoteLiveFigures: the executor's live figures of a remote
// experiment give its CPU % between reports, bounded histories, copies
// the caller may keep, and nothing once its run returned; RemoteSamples
// shows them on the experiment's row.
func TestRemoteLiveFigures(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var live remoteLive
	for i := range ProcHistory + 5 {
		live.add("exp_run", sandbox.Usage{CPUSeconds: 0.5 * float64(i), RSSBytes: int64(i+1) << 20, Processes: 3,
			At: t0.Add(time.Duration(i) * time.Second)})
	}
	got := live.snapshot()["exp_run"]
	cases := []struct {
		name string
		ok   bool
	}{
		{"cpu is 50 % of a core", got.CPUPercent == 50},
		{"the memory is the last report's", got.RSSBytes == int64(ProcHistory+5)<<20},
		{"the process count is the last report's", got.Processes == 3},
		{"histories are bounded", len(got.CPUHistory) == ProcHistory && len(got.RSSHistory) == ProcHistory},
		{"history ends with the last report", got.RSSHistory[ProcHistory-1] == got.RSSBytes},
	}
	for _, c := range cases {
		if !c.ok {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
	got.RSSHistory[0] = -1
	if live.snapshot()["exp_run"].RSSHistory[0] == -1 {
		t.Error("the snapshot shares its history with the tracker")
	}
	started := t0
	r := Receipt{ID: "exp_run", Status: ExpRunning, Machine: "w1", Remote: &Remote{Host: "h", Job: "j"}, StartedAt: &started}
	row := RemoteSamples([]Receipt{r}, t0.Add(time.Minute), live.snapshot())[0]
	if !row.Remote.Sampled || row.Remote.Processes != 3 || row.CPUPercent != 50 || row.RSSBytes != got.RSSBytes || len(row.CPUHistory) != ProcHistory {
		t.Errorf("sampled row = %+v (remote %+v)", row, row.Remote)
	}
	live.drop("exp_run")
	if len(live.snapshot()) != 0 {
		t.Error("a returned run's figures stayed")
	}
	if row := RemoteSamples([]Receipt{r}, t0, live.snapshot())[0]; row.Remote.Sampled || row.CPUHistory != nil {
		t.Errorf("row without figures = %+v", row)
	}
}
