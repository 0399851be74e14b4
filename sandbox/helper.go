package sandbox

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exit codes of the helper stages when they cannot do their job.
const (
	exitParentGone = 125
	exitUsage      = 2
	exitNoExec     = 127
)

// helperReport is the one JSON line the helper prints for Run.
type helperReport struct {
	ExitCode      *int    `json:"exit_code"`
	Signal        string  `json:"signal,omitempty"`
	TimedOut      bool    `json:"timed_out"`
	Cancelled     bool    `json:"cancelled"`
	ParentDied    bool    `json:"parent_died"`
	Limit         string  `json:"limit,omitempty"`
	PeakRSS       int64   `json:"peak_rss"`
	Samples       int     `json:"samples"`
	WallSeconds   float64 `json:"wall_seconds"`
	MaxCPUSeconds float64 `json:"max_cpu_seconds"`
	KilledByUs    bool    `json:"killed_by_us"`
	Containment   string  `json:"containment"`
	Launch        string  `json:"launch,omitempty"` // how the limits were set before the launcher ran: a Launch constant
	Survivors     int     `json:"survivors"`
	Error         string  `json:"error,omitempty"`
}

// HelperMain runs the hidden helper modes of our binary and returns the exit
// code. args are the arguments after HelperArg (a leading HelperArg is
// tolerated). With --serve --parent-pid P it is the persistent runner (see
// serveMain); with --config JSON it runs one experiment: it starts the target in its
// own session behind a start barrier (see launch), sets the target's
// rlimits, watches its process tree, enforces the limits, kills every
// descendant at the end and prints one JSON line.
func HelperMain(args []string) int {
	if len(args) > 0 && args[0] == HelperArg {
		args = args[1:]
	}
	if len(args) > 0 && args[0] == serveArg {
		return serveMain(args[1:])
	}
	cfg, err := oneShotConfig(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper:", err)
		return exitUsage
	}
	if !becomeRunner(cfg.ParentPID) {
		return exitParentGone
	}
	rep := oneShot(cfg)
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

// becomeRunner sets PR_SET_PDEATHSIG (SIGTERM; the host also sets it at
// fork), makes us a child subreaper and tags what we fork (tagForks). It
// also marks close-on-exec every descriptor above stderr it inherited: Go
// closes nothing in a child but what is close-on-exec, so a descriptor the
// host's own parent left open (a shell's, a lock file's) reached every
// experiment. It reports false when the parent is already gone.
func becomeRunner(parentPID int) bool {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
	if os.Getppid() != parentPID {
		return false
	}
	_ = unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	_ = tagForks(os.Getpid()) // best effort: setLimits still tags each target
	return true
}

// oneShot runs one experiment; SIGTERM or SIGINT cancels it, or stops it
// as for a dead parent when the parent is gone.
func oneShot(cfg helperConfig) helperReport {
	srv := newServer(cfg.ParentPID)
	w := newWatchdog(cfg, srv, 1)
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(done)
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				srv.onSignal(s, w.requestCancel)
			}
		}
	})
	return w.run()
}

// setLimits applies RLIMIT_CPU (soft cpu, hard cpu+1), RLIMIT_FSIZE,
// RLIMIT_AS and RLIMIT_CORE=0 to process pid (prlimit(2)), and tags it with
// RLIMIT_RTTIME = rtTagBase+tag (see runTag). A zero value leaves that limit
// alone. Limits are clamped to the current hard limit,
// which an unprivileged process cannot raise. RLIMIT_NOFILE is never touched.
func setLimits(pid int, cpu, fsize, as, tag uint64) error {
	for _, l := range limitList(cpu, fsize, as, tag) {
		// The target inherited our hard limits (limitList clamps to
		// those): read its own only if that fails.
		r := unix.Rlimit{Cur: l.soft, Max: l.hard}
		if unix.Prlimit(pid, l.res, &r, nil) == nil {
			continue
		}
		var cur unix.Rlimit
		if err := unix.Prlimit(pid, l.res, nil, &cur); err != nil {
			return fmt.Errorf("prlimit %d: %w", l.res, err)
		}
		r = unix.Rlimit{Cur: min(l.soft, cur.Max), Max: min(l.hard, cur.Max)}
		if err := unix.Prlimit(pid, l.res, &r, nil); err != nil {
			return fmt.Errorf("prlimit %d: %w", l.res, err)
		}
	}
	return nil
}

// rlimitSet is one limit a target gets.
type rlimitSet struct {
	res        int
	soft, hard uint64
}

// limitList is what setLimits sets (and the start gate sets on itself),
// each clamped to our own hard limit, which the target inherits and an
// unprivileged process cannot raise.
func limitList(cpu, fsize, as, tag uint64) []rlimitSet {
	all := []rlimitSet{{unix.RLIMIT_CORE, 0, 0}}
	if cpu > 0 {
		all = append(all, rlimitSet{unix.RLIMIT_CPU, cpu, cpu + 1})
	}
	if fsize > 0 {
		all = append(all, rlimitSet{unix.RLIMIT_FSIZE, fsize, fsize})
	}
	if as > 0 {
		all = append(all, rlimitSet{unix.RLIMIT_AS, as, as})
	}
	if tag > 0 {
		all = append(all, rlimitSet{unix.RLIMIT_RTTIME, rtTagBase + tag, rtTagBase + tag})
	}
	for i, l := range all {
		hard := ownHardLimit(l.res)
		all[i].soft, all[i].hard = min(l.soft, hard), min(l.hard, hard)
	}
	return all
}

// ownHardLimits are our own hard limits, read once: a runner's are never
// changed, and every target starts with them.
var ownHardLimits = sync.OnceValue(func() map[int]uint64 {
	m := map[int]uint64{}
	for _, r := range []int{unix.RLIMIT_CORE, unix.RLIMIT_CPU, unix.RLIMIT_FSIZE, unix.RLIMIT_AS, unix.RLIMIT_RTTIME} {
		var l unix.Rlimit
		if unix.Getrlimit(r, &l) == nil {
			m[r] = l.Max
		}
	}
	return m
})

func ownHardLimit(res int) uint64 {
	if m, ok := ownHardLimits()[res]; ok {
		return m
	}
	return unix.RLIM_INFINITY // unknown: the kernel refuses what is too high
}

// startBarrier is the script of the start barrier: /bin/sh waits for one
// line on fd 3 (written once the limits are set), closes it and becomes the
// target. If the helper dies first, the read fails and the target never runs.
const startBarrier = `read _ <&3 || exit 125; exec "$@" 3<&-`

// launch starts the target in a new session with the target's clean
// environment, stdin from /dev/null and stdout/stderr to the log files. The
// target starts behind a barrier (a /bin/sh waiting on a pipe) so that its
// rlimits are set with prlimit(2) before any of its code runs; the parent-
// death signal (SIGKILL) is set at fork and survives the exec. This costs a
// shell start instead of a second start of our own (much larger) binary.
func (w *watchdog) launch() error {
	if w.launchGated() {
		return nil
	}
	if w.cfg.BwrapGate {
		w.rep.Launch = LaunchBlockFD
		return w.launchBwrap()
	}
	files, err := w.openStdio()
	if err != nil {
		return err
	}
	defer files.close()
	if started, err := w.launchTraced(files); started || err != nil {
		w.rep.Launch = LaunchPtrace
		return err
	}
	w.rep.Launch = LaunchBarrier
	gate, release, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("helper: %w", err)
	}
	defer gate.Close()
	defer release.Close()
	argv := append([]string{"/bin/sh", "-c", startBarrier, "simjecture-experiment"}, w.cfg.Argv...)
	sys := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	w.attach(sys)
	attr := &syscall.ProcAttr{Dir: w.cfg.Dir, Env: w.cfg.Env, Sys: sys,
		Files: append(files.fds(), gate.Fd())}
	pid, err := w.srv.forkTarget(w, func() (int, error) {
		// The target's Pdeathsig follows the forking thread; the runner
		// never locks a goroutine to a thread, so none of its threads ends
		// before it does.
		return syscall.ForkExec("/bin/sh", argv, attr)
	})
	if err != nil {
		return fmt.Errorf("helper: start: %w", err)
	}
	w.target = pid
	if err := setLimits(pid, w.cfg.CPULimit, w.cfg.FsizeLimit, w.cfg.ASLimit, w.tag()); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return fmt.Errorf("helper: %w", err)
	}
	if _, err := release.Write([]byte("go\n")); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return fmt.Errorf("helper: release target: %w", err)
	}
	return nil
}

func signalName(n int) string {
	if s := unix.SignalName(syscall.Signal(n)); s != "" {
		return s
	}
	return "SIG" + strconv.Itoa(n)
}
