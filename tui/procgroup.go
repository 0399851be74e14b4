package tui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/simjecture/simjecture/engine"
)

// procRow is one row of the process monitor: a process, or an
// experiment's program with the launchers (bwrap, proot, the sandbox
// runner) it runs under folded into it. A launcher that runs as two
// processes (bwrap outside and as its namespace's init) is named once.
type procRow struct {
	engine.ProcSample
	folded  []string // the launchers folded into this row, outermost first
	program bool     // the row is an experiment's program, named by it
}

// groupProcs turns the monitor's tree (each process followed by its
// children) into rows: processes outside experiments as they are, and
// each experiment's subtree as its program (named by the experiment)
// with its launchers folded, then the program's own children.
func groupProcs(samples []engine.ProcSample) []procRow {
	var out []procRow
	for i := 0; i < len(samples); {
		s := samples[i]
		if s.Role != engine.RoleExperiment || s.Experiment == "" {
			out = append(out, procRow{ProcSample: s})
			i++
			continue
		}
		j := i
		for j < len(samples) && samples[j].Experiment == s.Experiment {
			j++
		}
		out = append(out, foldExperiment(samples[i:j])...)
		i = j
	}
	return out
}

// foldExperiment is one experiment's rows: its first program carries the
// launchers, at the depth of the experiment's outermost process.
func foldExperiment(group []engine.ProcSample) []procRow {
	base := group[0].Depth
	var launchers []string
	var progs []engine.ProcSample
	for _, s := range group {
		if s.Launcher != "" {
			launchers = append(launchers, s.Launcher)
		} else {
			progs = append(progs, s)
		}
	}
	if len(progs) == 0 { // still starting: show the innermost launcher
		progs, launchers = group[len(group)-1:], launchers[:len(launchers)-1]
	}
	top := progs[0].Depth
	out := make([]procRow, 0, len(progs))
	for k, p := range progs {
		p.Depth = base + max(0, p.Depth-top)
		if k > 0 {
			p.Depth = max(p.Depth, base+1)
		}
		out = append(out, procRow{ProcSample: p})
	}
	out[0].folded, out[0].program = launchers, true
	return out
}

// command is a row's COMMAND: an experiment's program is named by the
// experiment, with the launchers it runs under.
func (r procRow) command() string {
	if !r.program {
		return r.Command
	}
	in := ""
	if x := r.Remote; x != nil {
		in = " ⟨on " + x.Machine + " · " + x.Host + " · " + shortJob(x.Job) + "⟩"
	}
	if len(r.folded) > 0 {
		in = " ⟨in " + strings.Join(slices.Compact(slices.Clone(r.folded)), " › ") + "⟩"
	}
	return shortID(r.Experiment) + ": " + r.Command + in
}

// procHeader and procList are the process monitor table. CPU% and MiB are
// the latest sample; the cpu and mem sparklines are the last samples,
// each scaled from its own minimum to its maximum (the focused pane's
// title gives the selected row's range in % and MiB).
func procHeader(w int) string {
	return fmt.Sprintf("%7s %-*s %2s %5s %-6s %7s %-6s %7s %s", "PID", procCols(w), "COMMAND", "ST", "CPU%", "cpu",
		"MiB", "mem", "ELAPSED", "BACKEND")
}

// procCols is the width of the command column in a table w cells wide.
func procCols(w int) int { return max(8, w-2-7-1-1-2-1-5-1-6-1-7-1-6-1-7-1-11) }

// procList is the process monitor's rows, each rendered when shown.
func (m dashModel) procList(w int) rowList {
	cols, procs := procCols(w), m.procs
	l := rowList{n: len(procs), row: func(i int) string { return procLine(procs[i], cols) }}
	if m.procGen != 0 {
		l.data, l.shape = m.procGen, w
	}
	return l
}

// procLine is one process row, its COMMAND cols cells wide.
func procLine(p procRow, cols int) string {
	cmd := fit(strings.Repeat(" ", p.Depth)+p.command(), cols)
	pid := strconv.Itoa(p.PID)
	switch {
	case p.Remote != nil && !p.Remote.Sampled: // the worker reports no figures (a Slurm job)
		return fmt.Sprintf("%7s %s %2s %5s %-6s %7s %-6s %7s %s", "-", cmd, p.State, "-", "remote",
			"-", "remote", dur(p.Elapsed), shortBackend(p.Backend))
	case p.Remote != nil: // its whole tree on the worker: no pid here
		pid = "-"
	}
	return fmt.Sprintf("%7s %s %2s %5.1f %-6s %7.1f %-6s %7s %s", pid, cmd, p.State, p.CPUPercent,
		sparkRange(p.CPUHistory, 6), mib(p.RSSBytes), sparkRange(mibs(p.RSSHistory), 6), dur(p.Elapsed),
		shortBackend(p.Backend))
}

// shortJob is a worker's job id cut to its prefix and 8 hex digits.
func shortJob(job string) string {
	if len(job) > 12 {
		return job[:12]
	}
	return job
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func mibs(bs []int64) []float64 {
	out := make([]float64, len(bs))
	for i, b := range bs {
		out[i] = mib(b)
	}
	return out
}

// sparkRange draws the last w values (oldest first) scaled from their
// minimum to their maximum; a steady series draws the lowest bar.
func sparkRange(values []float64, w int) string {
	levels := []rune("▁▂▃▄▅▆▇█")
	if len(values) > w {
		values = values[len(values)-w:]
	}
	lo, hi := minMax(values)
	var b strings.Builder
	for _, v := range values {
		i := 0
		if hi > lo {
			i = int(math.Round((v - lo) / (hi - lo) * float64(len(levels)-1)))
		}
		b.WriteRune(levels[i])
	}
	return b.String()
}

func minMax(values []float64) (float64, float64) {
	if len(values) == 0 {
		return 0, 0
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// procScale is the focused Processes pane's title suffix: the range the
// selected row's sparklines span, with their units.
func (m dashModel) procScale(p pane) string {
	if p != paneProcesses || m.focus != p || m.sel[p] >= len(m.procs) {
		return ""
	}
	r := m.procs[m.sel[p]]
	on := ""
	switch {
	case r.Remote != nil && !r.Remote.Sampled:
		return " · on " + r.Remote.Machine + ": cpu and memory not sampled"
	case r.Remote != nil:
		on = fmt.Sprintf(" · on %s: %d processes", r.Remote.Machine, r.Remote.Processes)
	}
	n := min(len(r.CPUHistory), 6)
	clo, chi := minMax(r.CPUHistory[len(r.CPUHistory)-n:])
	k := min(len(r.RSSHistory), 6)
	mlo, mhi := minMax(mibs(r.RSSHistory[len(r.RSSHistory)-k:]))
	return fmt.Sprintf("%s · cpu %.1f–%.1f %% · mem %.1f–%.1f MiB", on, clo, chi, mlo, mhi)
}

// selectedExperiment is the experiment of the selected process row.
func (m dashModel) selectedExperiment() string {
	if i := m.sel[paneProcesses]; i < len(m.procs) {
		return m.procs[i].Experiment
	}
	return ""
}

// jumpToExperiment is enter on a process: the Experiments pane, with its
// experiment selected (its filter cleared if that hid it).
func (m dashModel) jumpToExperiment() dashModel {
	id := m.selectedExperiment()
	if id == "" {
		return m.say("this process belongs to no experiment")
	}
	for i, e := range m.experimentOrder() {
		if e.ID != id {
			continue
		}
		m.focus, m.sel[paneExperiments] = paneExperiments, i
		if s := m.shown(paneExperiments); s != nil && (len(s) == 0 || s[posIn(s, i)] != i) {
			m.filters[paneExperiments] = listFilter{}
		}
		return m
	}
	return m.say(shortID(id) + " is not among the experiments shown")
}

// keepProcessSelection puts the Processes selection back on the process
// it was on in prev, the rows before a new sample: processes start and
// end twice a second, and the selected row stays on its pid while it lives.
func (m dashModel) keepProcessSelection(prev []procRow) dashModel {
	i := m.sel[paneProcesses]
	if i >= len(prev) {
		return m
	}
	for j, r := range m.procs {
		if r.PID == prev[i].PID && r.Experiment == prev[i].Experiment {
			m.sel[paneProcesses] = j
			break
		}
	}
	return m
}
