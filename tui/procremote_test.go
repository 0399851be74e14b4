package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/engine"
)

// remoteFixture is the fixture with one more experiment running on worker
// gpu1, as the engine's RemoteSamples adds it to the process monitor.
func remoteFixture() *fakeEngine {
	f := fixture()
	started := t0.Add(-75 * time.Second)
	r := engine.Receipt{ID: "exp_c0ffee00aaaaaaaaaaaaaaaa", Status: engine.ExpRunning, IsolationBackend: "bubblewrap",
		Machine: "gpu1", Source: "nbody.py", StartedAt: &started,
		Remote: &engine.Remote{Host: "10.0.0.7", Job: "job_5e1f0c2a9b7d3e4f"}}
	f.state.Snapshot.Experiments = append(f.state.Snapshot.Experiments, r)
	f.procs = append(f.procs, engine.RemoteSamples([]engine.Receipt{r}, t0, nil)...)
	return f
}

// TestRemoteExperimentInProcessMonitor: a remote experiment is one row
// naming its machine, host and job, with its wall time, and "remote" where
// its CPU and memory would be; selecting it says they are not sampled,
// and enter jumps to the experiment.
func TestRemoteExperimentInProcessMonitor(t *testing.T) {
	t.Parallel()
	m := openDash(t, remoteFixture(), false, 120, 40)
	m, _ = step(t, m, keyMsg("x"))
	golden(t, "dashboard_remote_120x40", m.View())
	row := remoteRow(m)
	for _, want := range []string{"on gpu1", "10.0.0.7", "job_5e1f0c2a", "remote", "1m15s"} {
		if !strings.Contains(row, want) {
			t.Errorf("remote row %q lacks %q", row, want)
		}
	}
	m = selectProcRow(t, m, "exp_c0ffee00aaaaaaaaaaaaaaaa")
	if s := m.dash.procScale(paneProcesses); !strings.Contains(s, "not sampled") {
		t.Errorf("selected remote row's scale = %q", s)
	}
	m, _ = step(t, m, keyMsg("enter"))
	if m.dash.focus != paneExperiments {
		t.Fatalf("enter on the remote row: focus = %d", m.dash.focus)
	}
}

// TestSampledRemoteExperimentInProcessMonitor: a remote experiment whose
// worker reports its figures shows its CPU %, memory and their sparklines
// like a local one, with pid "-"; selecting it names its process count.
func TestSampledRemoteExperimentInProcessMonitor(t *testing.T) {
	t.Parallel()
	f := remoteFixture()
	r := f.state.Snapshot.Experiments[len(f.state.Snapshot.Experiments)-1]
	usage := map[string]engine.RemoteUsage{r.ID: {CPUPercent: 98.5, CPUHistory: []float64{10, 60, 98.5},
		RSSBytes: 112 << 20, RSSHistory: []int64{50 << 20, 100 << 20, 112 << 20}, Processes: 4}}
	f.procs = append(f.procs[:len(f.procs)-1], engine.RemoteSamples([]engine.Receipt{r}, t0, usage)...)
	m := openDash(t, f, false, 120, 40)
	m, _ = step(t, m, keyMsg("x"))
	row := remoteRow(m)
	for _, want := range []string{"on gpu1", "98.5", "112.0", "▁▅█", "1m15s"} {
		if !strings.Contains(row, want) {
			t.Errorf("sampled remote row %q lacks %q", row, want)
		}
	}
	if strings.Contains(row, "remote") {
		t.Errorf("sampled remote row %q still says remote for its figures", row)
	}
	m = selectProcRow(t, m, r.ID)
	if s := m.dash.procScale(paneProcesses); !strings.Contains(s, "on gpu1: 4 processes") || !strings.Contains(s, "mem 50.0–112.0 MiB") {
		t.Errorf("selected sampled remote row's scale = %q", s)
	}
}

// remoteRow is the fixture's remote experiment's line of the view.
func remoteRow(m Model) string {
	var row string
	for _, l := range strings.Split(m.View(), "\n") {
		if strings.Contains(l, "c0ffee") {
			row = l
		}
	}
	return row
}

// selectProcRow focuses the process monitor and moves its selection to
// experiment id's row.
func selectProcRow(t *testing.T, m Model, id string) Model {
	t.Helper()
	for m.dash.focus != paneProcesses {
		m, _ = step(t, m, keyMsg("tab"))
	}
	for m.dash.selectedExperiment() != id {
		before := m.dash.sel[paneProcesses]
		m, _ = step(t, m, keyMsg("j"))
		if m.dash.sel[paneProcesses] == before {
			t.Fatal("the remote row is not selectable")
		}
	}
	return m
}

// TestAttentionNamesUnreachableWorkers: while no machine of the pool can be
// reached, the attention line names the workers; only while the study runs.
func TestAttentionNamesUnreachableWorkers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status engine.Status
		down   []string
		want   string
	}{
		{engine.StatusRunning, []string{"w1", "w2"}, "no machine of the pool can be reached: w1, w2 unreachable"},
		{engine.StatusRunning, nil, ""},
		{engine.StatusCompleted, []string{"w1"}, ""},
		{engine.StatusPaused, []string{"w1"}, ""},
	}
	for _, tc := range cases {
		f := fixture()
		f.state.Snapshot.Provider = engine.ProviderState{}
		f.state.Snapshot.Status, f.state.Snapshot.UnreachableWorkers = tc.status, tc.down
		m := openDash(t, f, false, 120, 40)
		got := m.dash.attention()
		if (tc.want == "" && got != "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s with %v unreachable: attention %q, want %q", tc.status, tc.down, got, tc.want)
		}
		if tc.want != "" && !strings.Contains(m.View(), "w1, w2 unreachable") {
			t.Errorf("the attention line is not on the dashboard:\n%s", m.View())
		}
	}
}
