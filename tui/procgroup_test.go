package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

func TestGroupProcsFoldsLaunchers(t *testing.T) {
	t.Parallel()
	sup := engine.ProcSample{PID: 1, Depth: 0, Command: "simjecture study", Role: engine.RoleSupervisor}
	agent := engine.ProcSample{PID: 2, Depth: 1, Command: "codex", Role: engine.RoleAgent}
	exp := func(pid, depth int, id, cmd, launcher string) engine.ProcSample {
		return engine.ProcSample{PID: pid, Depth: depth, Command: cmd, Role: engine.RoleExperiment, Experiment: id, Launcher: launcher}
	}
	shared := engine.ProcSample{PID: 3, Depth: 1, Command: "simjecture __sandbox-runner", Role: engine.RoleExperiment, Launcher: engine.LauncherRunner}
	cases := []struct {
		name string
		in   []engine.ProcSample
		want string // pid:depth:command of each row
	}{
		{"bubblewrap under a shared runner", []engine.ProcSample{sup, agent, shared,
			exp(10, 2, "exp_a", "bwrap --unshare-pid", "bwrap"), exp(11, 3, "exp_a", "bwrap --unshare-pid", "bwrap"),
			exp(12, 4, "exp_a", "python3 sim.py", ""), exp(13, 5, "exp_a", "gfortran", ""),
			exp(20, 2, "exp_b", "bwrap", "bwrap"), exp(21, 3, "exp_b", "python3 b.py", "")},
			"1:0:simjecture study 2:1:codex 3:1:simjecture __sandbox-runner 12:2:exp_a: python3 sim.py ⟨in bwrap⟩ " +
				"13:3:gfortran 21:2:exp_b: python3 b.py ⟨in bwrap⟩"},
		{"proot under its own runner", []engine.ProcSample{sup,
			exp(30, 1, "exp_c", "simjecture __sandbox-runner --dir /run/exp_c", "runner"), exp(31, 2, "exp_c", "proot -r /", "proot"),
			exp(32, 3, "exp_c", "sleep 60", "")},
			"1:0:simjecture study 32:1:exp_c: sleep 60 ⟨in runner › proot⟩"},
		{"a launcher still starting", []engine.ProcSample{sup, exp(40, 1, "exp_d", "bwrap", "bwrap")},
			"1:0:simjecture study 40:1:exp_d: bwrap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, r := range groupProcs(c.in) {
				got = append(got, fmt.Sprintf("%d:%d:%s", r.PID, r.Depth, r.command()))
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("rows\n got %s\nwant %s", g, c.want)
			}
		})
	}
}

func TestSparkRangeScalesMinToMax(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   []float64
		want string
	}{
		{[]float64{100, 100, 100}, "▁▁▁"}, // steady: no full bars
		{[]float64{10, 11, 12}, "▁▅█"},    // a small rise uses the whole height
		{[]float64{0, 50, 100, 50, 0, 100, 7}, "▅█▅▁█▁"},
		{nil, ""},
	}
	for _, c := range cases {
		if got := sparkRange(c.in, 6); got != c.want {
			t.Errorf("sparkRange(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestEnterOnProcessJumpsToItsExperiment: enter on an experiment's
// program selects that experiment in the Experiments pane, clearing a
// filter that hid it; the pane title gives the sparklines' range.
func TestEnterOnProcessJumpsToItsExperiment(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, false, 120, 40)
	m = typeKeys(t, m, keyMsg("tab"), keyMsg("/"))
	m = typeKeys(t, m, typed("queued")...)
	m = typeKeys(t, m, keyMsg("enter"), keyMsg("tab"), keyMsg("j"), keyMsg("j"))
	if v := m.View(); !strings.Contains(v, "cpu 40.0–99.8 % · mem 20.0–120.0 MiB") {
		t.Fatalf("the Processes title gives no range:\n%s", v)
	}
	m = typeKeys(t, m, keyMsg("enter"))
	d := m.dash
	if d.focus != paneExperiments || d.experimentOrder()[d.sel[paneExperiments]].ID != "exp_7414d181768254f796d579ab" {
		t.Fatalf("enter on the program: focus %v, selected %d", d.focus, d.sel[paneExperiments])
	}
	if d.filters[paneExperiments].on() {
		t.Fatal("the filter that hid the experiment is still on")
	}
	m = typeKeys(t, m, keyMsg("tab"), keyMsg("k"), keyMsg("k"), keyMsg("enter"))
	if m.dash.focus != paneProcesses || !strings.Contains(m.View(), "belongs to no experiment") {
		t.Fatalf("enter on the supervisor must stay and say so:\n%s", m.View())
	}
}
