package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// Process roles in a ProcSample.
const (
	RoleSupervisor = "supervisor"
	RoleAgent      = "agent"
	RoleExperiment = "experiment"
)

// ProcHistory is how many samples (resident memory and CPU) a ProcMonitor
// keeps per pid.
const ProcHistory = 32

// helperMarker is the hidden argument of the sandbox helper that starts
// every experiment (sandbox.HelperArg); its subtree is one experiment.
const helperMarker = "__sandbox-runner"

// ProcSample is one live process of a study, as the process monitor shows it.
type ProcSample struct {
	PID        int
	PPID       int
	Depth      int           // 0 for a root, 1 for its children, …
	Command    string        // the command line, or the kernel's name for it
	State      string        // one letter from /proc/PID/stat: R, S, D, Z, T, …
	CPUPercent float64       // since the previous sample; 0 on the first
	CPUHistory []float64     // the last ProcHistory CPU samples, oldest first
	RSSBytes   int64         // resident memory now
	RSSHistory []int64       // the last ProcHistory resident-memory samples, oldest first
	Elapsed    time.Duration // since the process started
	Role       string        // RoleSupervisor, RoleAgent or RoleExperiment
	Experiment string        // the experiment id, for RoleExperiment
	Backend    string        // the execution backend for experiments; "host" otherwise
	// Launcher names what the process is when it only starts an
	// experiment's program: LauncherBwrap, LauncherPRoot or LauncherRunner
	// (the sandbox helper); "" for the program and every other process.
	Launcher string
	// Remote is set for an experiment running on a worker (RemoteSamples):
	// it has no pid here; its CPU and memory are its whole tree's on the
	// worker, when Remote.Sampled.
	Remote *RemoteProc
}

// RemoteProc is where a remote experiment of the process monitor runs.
type RemoteProc struct {
	Machine string // the worker id
	Host    string // the worker's host, as its profile names it
	Job     string // the worker's job id
	// Sampled: the worker reports the experiment's figures (an SSH
	// worker's daemon samples its tree); false for a Slurm job, and
	// before the first report.
	Sampled   bool
	Processes int // the processes of its tree on the worker, when Sampled
}

// Launchers of an experiment's program (ProcSample.Launcher).
const (
	LauncherBwrap  = "bwrap"
	LauncherPRoot  = "proot"
	LauncherRunner = "runner"
)

// launcherOf names the launcher a command line is, if it is one.
func launcherOf(cmdline string) string {
	if strings.Contains(cmdline, helperMarker) {
		return LauncherRunner
	}
	argv0, _, _ := strings.Cut(cmdline, " ")
	switch filepath.Base(argv0) {
	case "bwrap":
		return LauncherBwrap
	case "proot":
		return LauncherPRoot
	}
	return ""
}

// ProcMonitor samples the process trees under a set of root pids from
// /proc. It keeps a bounded resident-memory history per pid and forgets
// pids that are gone. It is safe for use by one sampler at a time; calls
// are serialised by a mutex.
type ProcMonitor struct {
	// Proc is the proc filesystem; "/proc" when empty (tests point it at a fake tree).
	Proc string
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu    sync.Mutex
	prev  map[int]procPrev
	hist  map[int][]int64
	chist map[int][]float64
	last  time.Time
}

type procPrev struct {
	ticks uint64
	start uint64
}

// procStat is what the sampler reads for one pid.
type procStat struct {
	pid, ppid  int
	comm       string
	state      string
	ticks      uint64 // utime + stime
	start      uint64 // starttime, in clock ticks after boot
	rssPages   int64
	cmdline    string
	experiment string
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// NewProcMonitor returns a monitor of the real /proc.
func NewProcMonitor() *ProcMonitor { return &ProcMonitor{} }

func (m *ProcMonitor) proc() string {
	if m.Proc == "" {
		return "/proc"
	}
	return m.Proc
}

func (m *ProcMonitor) now() time.Time {
	if m.Now == nil {
		return time.Now()
	}
	return m.Now()
}

// Sample reads the roots' tree from /proc (readTree) and returns the
// roots and all their live descendants in tree order (each process
// followed by its children, by pid). backend labels the experiments'
// processes.
func (m *ProcMonitor) Sample(roots []int, backend string) ([]ProcSample, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.prev == nil {
		m.prev, m.hist, m.chist = map[int]procPrev{}, map[int][]int64{}, map[int][]float64{}
	}
	all, err := m.readTree(roots)
	if err != nil {
		return nil, err
	}
	now := m.now()
	wall := now.Sub(m.last).Seconds()
	if m.last.IsZero() {
		wall = 0
	}
	m.last = now
	uptime := m.uptime()
	children := map[int][]int{}
	for pid, st := range all {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	for _, c := range children {
		sort.Ints(c)
	}
	var out []ProcSample
	seen := map[int]bool{}
	var walk func(pid, depth int, role, exp string)
	walk = func(pid, depth int, role, exp string) {
		st, ok := all[pid]
		if !ok || seen[pid] {
			return
		}
		seen[pid] = true
		role, exp = roleOf(st, depth, role, exp)
		out = append(out, m.sampleOf(st, depth, role, exp, backend, wall, uptime))
		for _, c := range children[pid] {
			walk(c, depth+1, role, exp)
		}
	}
	for _, r := range roots {
		walk(r, 0, "", "")
	}
	m.forget(seen)
	return out, nil
}

// roleOf decides a process's role from its parent's: the roots are the
// supervisor, the sandbox runner holds the experiment subtrees (each child
// of it is one experiment, named by its run folder), anything else a
// supervisor starts is the agent (worker or reviewer).
func roleOf(st procStat, depth int, parentRole, parentExp string) (string, string) {
	switch {
	case depth == 0:
		return RoleSupervisor, ""
	case parentRole == RoleExperiment && parentExp == "" && st.experiment != "":
		// A run started by the shared sandbox runner: its launcher's
		// arguments name the run folder, which is named after the experiment.
		return RoleExperiment, st.experiment
	case parentRole == RoleExperiment:
		return RoleExperiment, parentExp
	case strings.Contains(st.cmdline, helperMarker):
		return RoleExperiment, st.experiment
	case parentRole == RoleSupervisor || parentRole == RoleAgent:
		return RoleAgent, ""
	}
	return parentRole, parentExp
}

func (m *ProcMonitor) sampleOf(st procStat, depth int, role, exp, backend string, wall, uptime float64) ProcSample {
	s := ProcSample{PID: st.pid, PPID: st.ppid, Depth: depth, Command: st.cmdline, State: st.state,
		RSSBytes: st.rssPages * int64(os.Getpagesize()), Role: role, Experiment: exp, Backend: "host"}
	if s.Command == "" {
		s.Command = "[" + st.comm + "]"
	}
	if role == RoleExperiment {
		s.Backend, s.Launcher = backend, launcherOf(st.cmdline)
	}
	if p, ok := m.prev[st.pid]; ok && p.start == st.start && wall > 0 && st.ticks >= p.ticks {
		s.CPUPercent = float64(st.ticks-p.ticks) / clockTicks / wall * 100
	} else if ok && p.start != st.start {
		delete(m.hist, st.pid) // the pid was reused
		delete(m.chist, st.pid)
	}
	m.prev[st.pid] = procPrev{ticks: st.ticks, start: st.start}
	if uptime > 0 {
		s.Elapsed = time.Duration((uptime - float64(st.start)/clockTicks) * float64(time.Second)).Round(time.Second)
		s.Elapsed = max(s.Elapsed, 0)
	}
	h := append(m.hist[st.pid], s.RSSBytes)
	if len(h) > ProcHistory {
		h = append([]int64(nil), h[len(h)-ProcHistory:]...)
	}
	m.hist[st.pid] = h
	s.RSSHistory = append([]int64(nil), h...)
	c := append(m.chist[st.pid], s.CPUPercent)
	if len(c) > ProcHistory {
		c = append([]float64(nil), c[len(c)-ProcHistory:]...)
	}
	m.chist[st.pid] = c
	s.CPUHistory = append([]float64(nil), c...)
	return s
}

// forget drops the history of pids not seen in this sample.
func (m *ProcMonitor) forget(seen map[int]bool) {
	for pid := range m.prev {
		if !seen[pid] {
			delete(m.prev, pid)
		}
	}
	for pid := range m.hist {
		if !seen[pid] {
			delete(m.hist, pid)
			delete(m.chist, pid)
		}
	}
}

// Tracked is how many pids the monitor keeps history for.
func (m *ProcMonitor) Tracked() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.hist)
}

// readTree reads the roots and their descendants only, through each
// thread's children file (/proc/PID/task/TID/children): a sample costs the
// tree it shows, not every process of the host. A proc tree without those
// files (a kernel without CONFIG_PROC_CHILDREN, a test's fake) is read whole.
func (m *ProcMonitor) readTree(roots []int) (map[int]procStat, error) {
	if len(roots) == 0 || !m.hasChildren(roots[0]) {
		return m.readAll()
	}
	all := map[int]procStat{}
	for queue := slices.Clone(roots); len(queue) > 0; queue = queue[1:] {
		pid := queue[0]
		if _, ok := all[pid]; ok {
			continue
		}
		if st, ok := m.readPID(pid); ok { // a process that vanished meanwhile is skipped
			all[pid] = st
			queue = append(queue, m.children(pid)...)
		}
	}
	return all, nil
}

// hasChildren reports whether the proc tree lists pid's children.
func (m *ProcMonitor) hasChildren(pid int) bool {
	id := strconv.Itoa(pid)
	_, err := os.Stat(filepath.Join(m.proc(), id, "task", id, "children"))
	return err == nil
}

// children is the children of every thread of pid.
func (m *ProcMonitor) children(pid int) []int {
	dir := filepath.Join(m.proc(), strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

func (m *ProcMonitor) readAll() (map[int]procStat, error) {
	entries, err := os.ReadDir(m.proc())
	if err != nil {
		return nil, fmt.Errorf("process monitor: %w", err)
	}
	all := make(map[int]procStat, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := m.readPID(pid); ok {
			all[pid] = st
		}
	}
	return all, nil
}

// readPID reads /proc/PID/stat and cmdline; a process that vanished
// meanwhile is skipped.
func (m *ProcMonitor) readPID(pid int) (procStat, bool) {
	dir := filepath.Join(m.proc(), strconv.Itoa(pid))
	raw, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return procStat{}, false
	}
	st, ok := parseStat(raw)
	if !ok {
		return procStat{}, false
	}
	st.pid = pid
	if cmd, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		st.cmdline = strings.TrimSpace(strings.Join(args, " "))
		st.experiment = experimentOf(args)
	}
	return st, true
}

// parseStat reads the fields the monitor needs from /proc/PID/stat, with
// the sandbox's parser.
func parseStat(raw []byte) (procStat, bool) {
	st, err := sandbox.ParseProcStat(raw)
	if err != nil {
		return procStat{}, false
	}
	return procStat{comm: st.Comm, state: string(st.State), ppid: st.PPID,
		ticks: st.CPUTicks, start: st.Start, rssPages: st.RSSPages}, true
}

// experimentOf finds the experiment id in a sandbox helper's arguments: its
// private run folder is named after the experiment.
func experimentOf(args []string) string {
	for _, a := range args {
		for _, part := range strings.Split(a, "/") {
			if strings.HasPrefix(part, "exp_") {
				return part
			}
		}
	}
	return ""
}

func (m *ProcMonitor) uptime() float64 {
	b, err := os.ReadFile(filepath.Join(m.proc(), "uptime"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[0], 64)
	return u
}
