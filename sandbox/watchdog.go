package sandbox

import (
	"syscall"
	"time"
)

// Watchdog timing.
const (
	sampleEvery    = 50 * time.Millisecond
	slowEvery      = 10                     // every 10th sample (≈500 ms): workspace and CPU
	termGrace      = 2 * time.Second        // after the wall-time limit
	cancelGrace    = 500 * time.Millisecond // after a cancel: the study acts within 1 s
	cleanupRetries = 100                    // × sampleEvery: give up on survivors after ≈5 s
)

// watchdog is one run's state: the target, every process of the run it has seen
// (pid → start time) and what it found.
type watchdog struct {
	cfg        helperConfig
	id         uint64
	srv        *server
	exit       chan waitResult // the target's status, from the reaper
	cancel     chan struct{}   // a cancel request (SIGTERM in one-shot mode)
	wake       chan struct{}   // the reaper collected an orphan
	target     int
	startTicks uint64    // the target's start time
	gate       *gateProc // the start gate taken for the run, until it is launched (gate.go)
	gateReq    []byte    // its request
	gateConn   int       // the runner's end of the target's start gate socket, or -1 (gate.go)
	gatePath   string    // the program the gate executes
	// inheritedRSS bounds what the kernel's maxrss of the target counts of
	// the runner: a forked child starts with its parent's resident set,
	// and exec keeps that high-water mark, so a maxrss at or below it says
	// nothing about the experiment.
	inheritedRSS int64
	orphanRSS    int64 // the largest maxrss of its reaped orphans; under srv.mu
	seen         map[int]uint64
	rep          helperReport
	exited       bool
	start        time.Time
	lastRSS      int64
	terminating  bool
	graceUntil   time.Time
	killing      bool
	cg           *cgroup
	pidfd        int        // the target's pidfd from its clone, until watchExit takes it
	stopWatch    func()     // stops the pidfd watcher (see watchExit)
	files        *procFiles // open /proc files of the sampled processes
	cpu          cpuTally   // the tree's CPU time, as sampled
	// inferred: the signal was read from an exit status (128 + n under
	// Bubblewrap, PRoot's message), which a plain exit can also give, so
	// it names a limit only with evidence (see classify).
	inferred bool
	pss      *pssReading // the tree's last PSS sum (see memory)
	// usage sends the run's live figures to its host (serve mode, when
	// the host asked for them: cfg.UsageEvery); lastUsage is when it last did.
	usage     func(Usage)
	lastUsage time.Time
	lastProcs int // the processes of the last sample
	shm       shmWatch
}

func newWatchdog(cfg helperConfig, srv *server, id uint64) *watchdog {
	return &watchdog{cfg: cfg, id: id, srv: srv, seen: map[int]uint64{}, files: newProcFiles(), pidfd: -1, gateConn: -1, shm: newShmWatch(),
		exit: make(chan waitResult, 1), cancel: make(chan struct{}, 2), wake: make(chan struct{}, 1)}
}

// run launches the target, supervises it until it exits and cleans up.
func (w *watchdog) run() helperReport {
	if !w.open() {
		return w.rep
	}
	rep := w.supervise()
	w.release()
	w.cg.remove()
	return rep
}

// open registers the run and launches its target. It reports false, with
// the reason in w.rep, when the target could not be started.
func (w *watchdog) open() bool {
	w.srv.begin(w)
	w.takeGateFor()
	w.rep.Containment = containment(w.cg, w.srv.cgroups.pids)
	w.start = time.Now()
	err := w.launch()
	w.stopWatch = w.watchExit()
	if err != nil {
		w.stopWatch()
		w.rep.Error = err.Error()
		w.cg.remove()
		w.srv.end(w)
		return false
	}
	return true
}

// supervise watches the launched target until it exits, then kills what is
// left of the run and reports. The run's cgroup is left for the caller to
// remove once the report is out: a process in its exit path (a namespace's
// init tearing down) can hold it for a few milliseconds more.
func (w *watchdog) supervise() helperReport {
	defer w.srv.end(w)
	w.sample(false)
	w.loop()
	if msg := w.gateError(); msg != "" {
		w.rep.Error = msg
	}
	w.cleanup()
	w.srv.reap() // orphans already ended count; one still ending is not waited for (see reap)
	w.rep.PeakRSS = max(w.rep.PeakRSS, w.srv.orphanPeak(w))
	w.shmFilled()
	w.classify()
	return w.rep
}

// release lets go of what the run held for watching once its report is
// out (closing them took 30 µs before the report): the exit watcher and
// the /proc and shm files.
func (w *watchdog) release() {
	w.stopWatch()
	w.files.close()
	w.shm.close()
}

func (w *watchdog) loop() {
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	deadline := time.NewTimer(w.cfg.Timeout)
	defer deadline.Stop()
	gone := w.srv.gone
	for n := 1; !w.exited; {
		select {
		case r := <-w.exit:
			w.finish(r.ws, &r.ru)
		case <-w.cancel:
			w.onCancel()
		case <-gone:
			gone = nil
			w.parentGone()
		case <-tick.C:
			n++
			w.onTick(n%slowEvery == 0)
		case <-deadline.C:
			w.rep.TimedOut = true
			w.setLimit(LimitWallTime)
			w.terminate(termGrace)
		}
	}
}

// onCancel handles a cancel request: SIGTERM to the tree with a short
// grace, or SIGKILL at once when the tree is already being terminated.
func (w *watchdog) onCancel() {
	switch {
	case w.terminating:
		w.rep.Cancelled = true
		w.killing = true
		w.killAll(syscall.SIGKILL)
	default:
		w.rep.Cancelled = true
		w.terminate(cancelGrace)
	}
}

func (w *watchdog) onTick(slow bool) {
	if !w.srv.parentAlive() {
		w.parentGone()
		return
	}
	w.srv.reap()
	w.sample(slow)
	if w.cfg.Memory > 0 && w.lastRSS > w.cfg.Memory {
		w.setLimit(LimitMemory)
		w.killing = true
	}
	if w.overCPU() {
		w.setLimit(LimitCPUTime)
		w.killing = true
	}
	if w.terminating && time.Now().After(w.graceUntil) {
		w.killing = true
	}
	if w.killing {
		w.killAll(syscall.SIGKILL)
	}
	if w.cfg.ProotStatus {
		w.watchTracee()
	}
	w.reportUsage()
}

// watchTracee handles PRoot, which only exits once every tracee is gone.
// While the experiment (PRoot's first tracee) runs, PRoot has a child; once
// it has ended, its orphans are our children (we are their subreaper) and
// are killed so that PRoot exits with the experiment's status.
func (w *watchdog) watchTracee() {
	if w.exited || len(children(w.target, nil)) > 0 {
		return
	}
	for _, pid := range w.tree() {
		if st, err := readStat(pid); err == nil && pid != w.target {
			w.seen[pid] = st.start
			signalIfSame(pid, st.start, syscall.SIGKILL)
		}
	}
}

func (w *watchdog) parentGone() {
	w.rep.ParentDied = true
	w.killing = true
	w.killAll(syscall.SIGKILL)
}

func (w *watchdog) setLimit(l string) {
	if w.rep.Limit == "" {
		w.rep.Limit = l
	}
}

// terminate sends SIGTERM to the tree; SIGKILL follows after grace.
// A launcher (bwrap, proot) is spared the SIGTERM: it would die at once and
// take its children down (bwrap) or abandon them (proot) without a grace.
func (w *watchdog) terminate(grace time.Duration) {
	if w.terminating {
		return
	}
	w.terminating = true
	w.graceUntil = time.Now().Add(grace)
	w.rep.KilledByUs = true
	for _, pid := range w.tree() {
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		w.seen[pid] = st.start
		if pid != w.target || !w.cfg.ExitSignals {
			signalIfSame(pid, st.start, syscall.SIGTERM)
		}
	}
}

// sample walks the tree, records new members and measures the memory they
// hold (see memory). A slow sample also reads CPU times and measures the
// workspace.
func (w *watchdog) sample(slow bool) {
	var tally treeTally
	var buf [1024]byte
	queue := w.roots()
	for i := 0; i < len(queue); i++ {
		pid := queue[i]
		st, ok := w.files.stat(pid, buf[:]) // one pread: identity, CPU, RSS and threads
		if !ok {
			continue
		}
		if _, known := w.seen[pid]; !known || slow {
			w.seen[pid] = st.start
		}
		w.rep.MaxCPUSeconds = max(w.rep.MaxCPUSeconds, float64(st.cpuTicks)/clockTicks)
		w.cpu.see(pid, st.start, st.cpuTicks)
		tally.add(pid, st)
		queue = w.files.children(pid, st.threads, queue)
	}
	if slow {
		live := make(map[int]bool, len(queue))
		for _, pid := range queue {
			live[pid] = true
		}
		w.files.keep(live)
	}
	rss := w.memory(&tally, queue) + w.shmMemory(queue)
	w.lastRSS, w.lastProcs = rss, len(queue)
	w.rep.Samples++
	if w.rep.Samples > 1 { // the first is taken at the launch: the experiment has not run yet
		w.rep.PeakRSS = max(w.rep.PeakRSS, rss)
	}
	if slow {
		w.forgetGone()
	}
	if slow && w.cfg.Workspace > 0 && w.overWorkspace() {
		w.setLimit(LimitWorkspace)
		w.killing = true
	}
}

// overWorkspace reports whether the watched folders, with the unlinked
// files the run's processes (as last sampled: w.seen) hold open there, pass
// the workspace limit or could not be measured.
func (w *watchdog) overWorkspace() bool {
	u := measureWorkspace(w.cfg.Watch, 0, w.cfg.Harness)
	held, ok := deletedOpenBytes(w.seen, watchedDevices(w.cfg.Watch), u.seen)
	return !u.ok || !ok || u.total+held > w.cfg.Workspace
}

// forgetGone drops recorded processes that are gone, so that a reused pid
// is not taken for one of ours.
func (w *watchdog) forgetGone() {
	for pid, start := range w.seen {
		if !alive(pid, start) {
			delete(w.seen, pid)
			w.cpu.forget(pid, start)
		}
	}
}

// killAll signals every current descendant and every recorded one that is
// still the same process, forgetting those that are gone. It returns how many
// were signalled.
func (w *watchdog) killAll(sig syscall.Signal) int {
	w.rep.KilledByUs = true
	n := 0
	for _, pid := range w.tree() {
		if st, err := readStat(pid); err == nil {
			w.seen[pid] = st.start
		}
	}
	for pid, start := range w.seen {
		if !alive(pid, start) {
			delete(w.seen, pid)
			continue
		}
		signalIfSame(pid, start, sig)
		n++
	}
	w.cg.kill()
	return n
}

// tree lists the run's processes: the target while it runs, the orphans
// that belong to the run, and everything below them.
// roots are the target (while it runs) and the orphans this run owns.
func (w *watchdog) roots() []int {
	var out []int
	if w.target > 0 && !w.exited {
		out = append(out, w.target)
	}
	return append(out, w.srv.orphansOf(w)...)
}

func (w *watchdog) tree() []int {
	out := w.roots()
	for i := 0; i < len(out); i++ {
		out = children(out[i], out)
	}
	return out
}

func (w *watchdog) finish(ws syscall.WaitStatus, ru *syscall.Rusage) {
	w.exited = true
	w.rep.WallSeconds = time.Since(w.start).Seconds()
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	w.rep.MaxCPUSeconds = max(w.rep.MaxCPUSeconds, cpu)
	if kernel := ru.Maxrss * 1024; kernel > w.inheritedRSS {
		w.rep.PeakRSS = max(w.rep.PeakRSS, kernel)
	}
	switch {
	case ws.Signaled():
		w.rep.Signal = signalName(int(ws.Signal()))
	case w.cfg.ExitSignals && ws.ExitStatus() > 128 && ws.ExitStatus() < 128+65:
		w.rep.Signal, w.inferred = signalName(ws.ExitStatus()-128), true
	case w.cfg.ProotStatus && ws.ExitStatus() == 255 && prootSignal(w.cfg.Stderr) > 0:
		w.rep.Signal, w.inferred = signalName(prootSignal(w.cfg.Stderr)), true
	default:
		code := ws.ExitStatus()
		w.rep.ExitCode = &code
	}
}

// cleanup SIGKILLs every descendant still alive until none is left. While
// it waits for them to end, SIGCHLD is relayed to the reaper (chld.go),
// which wakes it; the round after the relay is turned on does not wait, so
// that an end signalled before is not missed.
func (w *watchdog) cleanup() {
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	relayed := false
	defer func() {
		if relayed {
			w.srv.chld.release()
		}
	}()
	for i := 0; i < cleanupRetries; i++ {
		w.srv.reap()
		if w.killAllQuiet() == 0 {
			w.rep.Survivors = 0
			return
		}
		if !relayed {
			w.srv.chld.hold()
			relayed = true
			continue
		}
		select {
		case <-w.wake:
		case <-tick.C:
		}
	}
	w.rep.Survivors = len(w.seen)
}

// killAllQuiet is killAll for the final sweep: it does not mark the run as
// killed by us, since the experiment already ended on its own.
func (w *watchdog) killAllQuiet() int {
	by := w.rep.KilledByUs
	n := w.killAll(syscall.SIGKILL)
	w.rep.KilledByUs = by
	return n
}

// minXCPUSeconds: RLIMIT_CPU counts whole seconds, so a process it sent
// SIGXCPU has used at least 1 s of CPU (a sample sees it at most 50 ms late).
const minXCPUSeconds = 0.75

// classify names the limit a signal points to, when the watchdog did not
// already record one.
func (w *watchdog) classify() {
	if w.cg.oomKilled() {
		w.setLimit(LimitMemory)
	}
	switch w.rep.Signal {
	case "SIGXCPU":
		if !w.inferred || w.rep.MaxCPUSeconds >= minXCPUSeconds {
			w.setLimit(LimitCPUTime)
		}
	case "SIGXFSZ":
		if !w.inferred { // else a file at the limit must show it (collect.go's finish)
			w.setLimit(LimitFileSize)
		}
	case "SIGKILL":
		near := w.cfg.CPULimit > 0 && w.rep.MaxCPUSeconds >= float64(w.cfg.CPULimit)-1.5
		if !w.rep.KilledByUs && near {
			w.setLimit(LimitCPUTime)
		}
	}
}

// requestCancel asks the watchdog to cancel the run; it never blocks.
func (w *watchdog) requestCancel() {
	select {
	case w.cancel <- struct{}{}:
	default:
	}
}
