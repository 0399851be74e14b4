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
	f.procs = append(f.procs, engine.RemoteSamples([]engine.Receipt{r}, t0)...)
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
	var row string
	for _, l := range strings.Split(m.View(), "\n") {
		if strings.Contains(l, "c0ffee") {
			row = l
		}
	}
	for _, want := range []string{"on gpu1", "10.0.0.7", "job_5e1f0c2a", "remote", "1m15s"} {
		if !strings.Contains(row, want) {
			t.Errorf("remote row %q lacks %q", row, want)
		}
	}
	for m.dash.focus != paneProcesses {
		m, _ = step(t, m, keyMsg("tab"))
	}
	for m.dash.selectedExperiment() != "exp_c0ffee00aaaaaaaaaaaaaaaa" {
		before := m.dash.sel[paneProcesses]
		m, _ = step(t, m, keyMsg("j"))
		if m.dash.sel[paneProcesses] == before {
			t.Fatal("the remote row is not selectable")
		}
	}
	if s := m.dash.procScale(paneProcesses); !strings.Contains(s, "not sampled") {
		t.Errorf("selected remote row's scale = %q", s)
	}
	m, _ = step(t, m, keyMsg("enter"))
	if m.dash.focus != paneExperiments {
		t.Fatalf("enter on the remote row: focus = %d", m.dash.focus)
	}
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
