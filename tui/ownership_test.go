package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestStatusBarSaysWhoRunsTheStudy: the status bar names this process,
// another live one, or nobody; a finished study with no supervisor is
// never `attached`.
func TestStatusBarSaysWhoRunsTheStudy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                    string
		status                  engine.Status
		readOnly, mine, another bool
		want                    string
	}{
		{"supervising", engine.StatusRunning, false, true, false, "] supervising │"},
		{"another process", engine.StatusRunning, false, false, true, "] attached │"},
		{"read-only", engine.StatusRunning, true, false, true, "] read-only │"},
		{"completed", engine.StatusCompleted, false, false, false, "] finished │"},
		{"cancelled", engine.StatusCancelled, false, false, false, "] finished │"},
		{"paused", engine.StatusPaused, false, false, false, "] stopped │"},
		{"interrupted", engine.StatusInterrupted, false, false, false, "] stopped │"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fixture()
			f.state.Snapshot.Status, f.state.Supervising, f.state.OtherOwner = tc.status, tc.mine, tc.another
			m := openDash(t, f, tc.readOnly, 120, 30)
			if bar := lastLine(m.View()); !strings.Contains(bar, tc.want) {
				t.Errorf("want %q in the status bar: %q", tc.want, bar)
			}
		})
	}
}

// TestRunesInOneReadAreKeysEach: keys that reach the program in one read
// (`jj`, as a fast typist or tmux sends them) act one by one.
func TestRunesInOneReadAreKeysEach(t *testing.T) {
	t.Parallel()
	f := fixture()
	one := openDash(t, f, false, 120, 30)
	for range 2 {
		one, _ = step(t, one, keyMsg("j"))
	}
	both, _ := step(t, openDash(t, fixture(), false, 120, 30), keyMsg("jj"))
	if one.dash.sel != both.dash.sel || one.dash.sel == openDash(t, fixture(), false, 120, 30).dash.sel {
		t.Errorf("jj in one read: selection %v, want %v (j then j)", both.dash.sel, one.dash.sel)
	}
}

// TestExperimentSelectionStaysOnItsExperiment: when the queued experiment
// starts and the running one finishes, the order changes (running first),
// and the selection, and so its detail, stays on the experiment chosen.
func TestExperimentSelectionStaysOnItsExperiment(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, false, 120, 40)
	m, _ = step(t, m, keyMsg("tab")) // Claims → Experiments
	m, _ = step(t, m, keyMsg("j"))   // the queued one, under the running one
	chosen := m.dash.experimentOrder()[m.dash.sel[paneExperiments]].ID
	if chosen != "exp_bfb2add7aaaaaaaaaaaaaaaa" {
		t.Fatalf("the fixture's second row is %s, want the queued experiment", chosen)
	}
	m, _ = step(t, m, keyMsg("enter"))
	started := t0
	exps := slices.Clone(f.state.Snapshot.Experiments) // the model holds the old slice
	f.state.Snapshot.Experiments = exps
	exps[1].Status, exps[1].FinishedAt = engine.ExpSucceeded, &started
	exps[2].Status, exps[2].StartedAt = engine.ExpRunning, &started
	m = feed(t, m, m.dash.refreshCmd())
	if got := m.dash.experimentOrder()[m.dash.sel[paneExperiments]].ID; got != chosen {
		t.Errorf("after the reorder the selection is on %s, want %s", got, chosen)
	}
	if v := m.View(); !strings.Contains(v, "Experiment "+chosen) {
		t.Errorf("the open detail left its experiment:\n%s", v)
	}
}

// TestProcessSelectionStaysOnItsProcess: a process that starts above the
// selected row does not move the selection to another process.
func TestProcessSelectionStaysOnItsProcess(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, false, 120, 40)
	m, _ = step(t, m, procsMsg{gen: m.dash.gen, rows: f.procs})
	m, _ = step(t, m, keyMsg("tab"))
	m, _ = step(t, m, keyMsg("tab")) // Claims → Experiments → Processes
	for m.dash.sel[paneProcesses] < len(m.dash.procs)-1 {
		m, _ = step(t, m, keyMsg("j"))
	}
	chosen := m.dash.procs[m.dash.sel[paneProcesses]].PID
	reviewer := engine.ProcSample{PID: 4125, Depth: 1, Command: "python3 agent.py --review", State: "S", Role: engine.RoleAgent, Backend: "host"}
	rows := append(slices.Clone(f.procs[:2]), append([]engine.ProcSample{reviewer}, f.procs[2:]...)...)
	m, _ = step(t, m, procsMsg{gen: m.dash.gen, rows: rows})
	if got := m.dash.procs[m.dash.sel[paneProcesses]].PID; got != chosen {
		t.Errorf("a new process moved the selection from pid %d to pid %d", chosen, got)
	}
}
