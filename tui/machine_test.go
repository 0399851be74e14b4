package tui

import (
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestMachineText: the experiment detail names where it ran.
func TestMachineText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		r    engine.Receipt
		want []string
	}{
		{engine.Receipt{Machine: "local"}, []string{"local", "this host"}},
		{engine.Receipt{}, []string{"local"}},
		{engine.Receipt{Machine: "gpu1", Remote: &engine.Remote{Host: "10.0.0.7", Job: "job_ab"}}, []string{"gpu1", "10.0.0.7", "job_ab"}},
		{engine.Receipt{Machine: "hpc", Remote: &engine.Remote{Scheduler: "slurm", Job: "12", State: "queued"}}, []string{"hpc (slurm job 12, queued)"}},
		{engine.Receipt{Machine: "hpc", Remote: &engine.Remote{Scheduler: "slurm", Job: "12", State: "running", Node: "n1"}}, []string{"hpc (slurm job 12, running, node n1)"}},
		{engine.Receipt{Machine: "hpc", Remote: &engine.Remote{Scheduler: "slurm", Job: "12", Node: "n1"}}, []string{"hpc (slurm job 12, node n1)"}},
	}
	for _, tc := range cases {
		got := machineText(tc.r)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("machineText(%+v) = %q, want it to contain %q", tc.r, got, w)
			}
		}
	}
}

// TestQueuedJobShownQueued: a running receipt whose Slurm job still waits
// reads as queued on its machine in the experiments pane.
func TestQueuedJobShownQueued(t *testing.T) {
	t.Parallel()
	f := fixture()
	e := &f.state.Snapshot.Experiments[0]
	e.Status, e.Machine, e.WallSeconds = engine.ExpRunning, "hpc", nil
	e.Remote = &engine.Remote{Scheduler: "slurm", Job: "12", State: "queued"}
	m := openDash(t, f, false, 160, 40)
	var row string
	for _, l := range strings.Split(m.View(), "\n") {
		if strings.Contains(l, shortID(e.ID)) {
			row = l
		}
	}
	if !strings.Contains(row, "queued") || strings.Contains(row, "running") || !strings.Contains(row, "@hpc") {
		t.Fatalf("row %q, want it queued on hpc", row)
	}
}
