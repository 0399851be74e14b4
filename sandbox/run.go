package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// helperWaitDelay is how long Run waits for the helper after asking it to
// stop before killing it: the helper's own grace plus its final sweep.
const helperWaitDelay = termGrace + 8*time.Second

// prootMinFileBytes is the smallest RLIMIT_FSIZE PRoot can start under: it
// extracts its loader (tens of KiB) to a temporary file first.
const prootMinFileBytes = 1 << 20

// Run executes one experiment as described by spec and collects its outputs.
// It returns an error only for harness failures (a bad spec, a sealed file
// that changed before the run, folders that cannot be made, a helper that
// fails); a failing experiment is a normal Result. Cancelling ctx stops the
// run (SIGTERM to the whole tree, SIGKILL after 2 s) and sets Cancelled.
func Run(ctx context.Context, spec Spec) (Result, error) {
	spec, err := normalize(spec)
	if err != nil {
		return Result{}, err
	}
	if IsCooperative(spec.Backend) && os.Geteuid() == 0 {
		return Result{}, fmt.Errorf("%s: %w", spec.Backend, ErrUnprivileged)
	}
	lay := newLayout(spec.RunDir)
	if err := makeRunDir(lay); err != nil {
		return Result{}, err
	}
	defer removeTree(lay.run)
	sealed, err := sealAll(spec, lay.work)
	if err != nil {
		return Result{}, err
	}
	cfg, err := helperFor(spec, lay)
	if err != nil {
		return Result{}, err
	}
	res, err := runHelper(ctx, spec, cfg)
	if err != nil {
		return res, err
	}
	return res, finish(spec, lay, sealed, &res)
}

func makeRunDir(lay layout) error {
	if err := os.MkdirAll(filepath.Dir(lay.run), 0o755); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	if err := os.Mkdir(lay.run, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("run dir: %w", err)
	}
	if names, err := readDirNames(lay.run); err != nil || len(names) > 0 {
		return fmt.Errorf("run dir %s must be a new or empty folder: %w", lay.run, errors.Join(err, fs.ErrExist))
	}
	for _, d := range []string{lay.work, lay.tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("run dir: %w", err)
		}
	}
	return nil
}

// removeTree removes dir even when the experiment took the write or search
// bits away from folders inside it.
func removeTree(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, _ error) error {
		if e != nil && e.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// helperFor prepares the backend's command line and the helper's settings.
func helperFor(s Spec, lay layout) (helperConfig, error) {
	cfg := helperConfig{
		parentPID: os.Getpid(), timeout: s.Timeout, memory: s.MemoryBytes,
		workspace: s.WorkspaceBytes, cpuLimit: cpuLimit(s), fsizeLimit: uint64(s.MaxFileBytes),
		asLimit: uint64(cooperativeAS), watch: []string{lay.work, lay.tmp},
		stdout: lay.stdout, stderr: lay.stderr, dir: lay.work, exitSignals: true,
	}
	switch s.Backend {
	case Bubblewrap:
		bwrap, err := bwrapPath()
		if err != nil {
			return cfg, err
		}
		cfg.asLimit = uint64(s.MemoryBytes + bubblewrapASHeadroom)
		cfg.argv, cfg.env = bwrapArgv(bwrap, s, lay), []string{"PATH=/usr/bin:/bin"}
	case ProotCooperative:
		proot, err := prootPath()
		if err != nil {
			return cfg, err
		}
		argv, err := prootArgv(proot, s, lay)
		cfg.argv, cfg.env, cfg.prootStatus = argv, envList(sandboxEnv(s)), true
		// PRoot writes its loader to a temporary file under the same limit.
		cfg.fsizeLimit = max(cfg.fsizeLimit, prootMinFileBytes)
		return cfg, err
	case ProcessCooperative:
		cfg.argv, cfg.env, cfg.dir = processLaunch(s, lay)
		cfg.exitSignals = false
	}
	return cfg, nil
}

// runHelper starts our binary in helper mode and turns its report into a
// Result.
func runHelper(ctx context.Context, s Spec, cfg helperConfig) (Result, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, s.SelfExe, append([]string{HelperArg}, cfg.args()...)...)
	cmd.Env = []string{}
	cmd.Stdout, cmd.Stderr = &stdout, &limitedWriter{buf: &stderr, n: 64 << 10}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = helperWaitDelay
	res := Result{Backend: s.Backend, StartedAt: time.Now().UTC()}
	// Pdeathsig follows the thread that forks the helper.
	runtime.LockOSThread()
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return res, fmt.Errorf("%w: start: %w", ErrHelper, err)
	}
	waitErr := cmd.Wait()
	res.FinishedAt = time.Now().UTC()
	rep, perr := parseReport(stdout.Bytes())
	switch {
	case perr != nil && ctx.Err() != nil:
		res.Cancelled = true
		return res, nil
	case perr != nil:
		return res, fmt.Errorf("%w: %w: %w: %s", ErrHelper, perr, waitErr, tail(stderr.Bytes(), 2000))
	case rep.Error != "":
		return res, fmt.Errorf("%w: %s", ErrHelper, rep.Error)
	}
	applyReport(&res, rep, ctx.Err() != nil)
	return res, nil
}

func parseReport(out []byte) (helperReport, error) {
	var rep helperReport
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &rep); err != nil {
		return rep, fmt.Errorf("no report: %w", err)
	}
	return rep, nil
}

func applyReport(res *Result, rep helperReport, ctxDone bool) {
	res.TimedOut = rep.TimedOut
	res.Cancelled = rep.Cancelled || ctxDone
	res.LimitExceeded = rep.Limit
	res.WallSeconds = rep.WallSeconds
	res.Containment = rep.Containment
	if rep.Samples > 0 || rep.PeakRSS > 0 {
		peak := rep.PeakRSS
		res.PeakRSSBytes = &peak
	}
	if rep.Signal != "" {
		sig := rep.Signal
		res.Signal = &sig
	}
	killedForLimit := rep.KilledByUs && rep.Limit != ""
	if rep.ExitCode != nil && !killedForLimit {
		rc := *rep.ExitCode
		res.ReturnCode = &rc
	}
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	buf *bytes.Buffer
	n   int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.n - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
