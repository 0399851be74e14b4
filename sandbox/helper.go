package sandbox

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
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
	Survivors     int     `json:"survivors"`
	Error         string  `json:"error,omitempty"`
}

// HelperMain runs the hidden helper modes of our binary and returns the exit
// code. args are the arguments after HelperArg (a leading HelperArg is
// tolerated). With HelperExecArg first it is the exec stage: set the rlimits
// and become the target. Otherwise it is the runner: start the target through
// the exec stage in its own session, watch its process tree, enforce the
// limits, kill every descendant at the end and print one JSON line.
func HelperMain(args []string) int {
	if len(args) > 0 && args[0] == HelperArg {
		args = args[1:]
	}
	if len(args) > 0 && args[0] == HelperExecArg {
		return execStage(args[1:])
	}
	cfg, err := parseHelperArgs(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper:", err)
		return exitUsage
	}
	// The target inherits Pdeathsig from the thread that forks it; this
	// goroutine keeps its thread for the helper's whole life.
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
	if os.Getppid() != cfg.parentPID {
		return exitParentGone
	}
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	rep := newWatchdog(cfg).run(sigs)
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

// execStage sets the limits on itself and replaces itself with the target.
func execStage(args []string) int {
	var cpu, fsize, as uint64
	var parent int
	fs := flag.NewFlagSet(HelperExecArg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	limitFlags(fs, &cpu, &fsize, &as)
	fs.IntVar(&parent, "parent-pid", 0, "")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "sandbox exec: bad arguments")
		return exitUsage
	}
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	if parent > 0 && os.Getppid() != parent {
		return exitParentGone
	}
	if err := setLimits(cpu, fsize, as); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox exec:", err)
		return exitNoExec
	}
	argv := fs.Args()
	path, err := exec.LookPath(argv[0])
	if err == nil {
		err = syscall.Exec(path, argv, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "sandbox: cannot execute %s: %v\n", argv[0], err)
	return exitNoExec
}

// setLimits applies RLIMIT_CPU (soft cpu, hard cpu+1), RLIMIT_FSIZE,
// RLIMIT_AS and RLIMIT_CORE=0. A zero value leaves that limit alone. Limits
// are clamped to the current hard limit, which an unprivileged process
// cannot raise. RLIMIT_NOFILE is never touched, so Go still restores the
// original NOFILE soft limit on exec.
func setLimits(cpu, fsize, as uint64) error {
	type lim struct {
		res        int
		soft, hard uint64
	}
	all := []lim{{unix.RLIMIT_CORE, 0, 0}}
	if cpu > 0 {
		all = append(all, lim{unix.RLIMIT_CPU, cpu, cpu + 1})
	}
	if fsize > 0 {
		all = append(all, lim{unix.RLIMIT_FSIZE, fsize, fsize})
	}
	if as > 0 {
		all = append(all, lim{unix.RLIMIT_AS, as, as})
	}
	for _, l := range all {
		var cur unix.Rlimit
		if err := unix.Getrlimit(l.res, &cur); err != nil {
			return fmt.Errorf("getrlimit %d: %w", l.res, err)
		}
		r := unix.Rlimit{Cur: min(l.soft, cur.Max), Max: min(l.hard, cur.Max)}
		if err := unix.Setrlimit(l.res, &r); err != nil {
			return fmt.Errorf("setrlimit %d: %w", l.res, err)
		}
	}
	return nil
}

// launch starts the exec stage in a new session with the target's clean
// environment, stdin from /dev/null and stdout/stderr to the log files.
func (w *watchdog) launch() error {
	files, err := openStdio(w.cfg.stdout, w.cfg.stderr)
	if err != nil {
		return err
	}
	defer closeAll(files)
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("helper: %w", err)
	}
	argv := []string{self, HelperArg, HelperExecArg,
		"--parent-pid", strconv.Itoa(w.self),
		"--cpu", strconv.FormatUint(w.cfg.cpuLimit, 10),
		"--fsize", strconv.FormatUint(w.cfg.fsizeLimit, 10),
		"--as", strconv.FormatUint(w.cfg.asLimit, 10), "--"}
	sys := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	w.cg.attach(sys)
	attr := &syscall.ProcAttr{Dir: w.cfg.dir, Env: w.cfg.env, Sys: sys,
		Files: []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd()}}
	pid, err := syscall.ForkExec(self, append(argv, w.cfg.argv...), attr)
	if err != nil {
		return fmt.Errorf("helper: start: %w", err)
	}
	w.target = pid
	return nil
}

func openStdio(stdout, stderr string) ([]*os.File, error) {
	in, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("helper: %w", err)
	}
	files := []*os.File{in}
	for _, p := range []string{stdout, stderr} {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			closeAll(files)
			return nil, fmt.Errorf("helper: %w", err)
		}
		files = append(files, f)
	}
	return files, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

func signalName(n int) string {
	if s := unix.SignalName(syscall.Signal(n)); s != "" {
		return s
	}
	return "SIG" + strconv.Itoa(n)
}
