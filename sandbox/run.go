package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// helperWaitDelay is how long Run waits for a run's report after sending
// the cancel request: the watchdog's own grace plus its final sweep.
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
	reuse := false // the run folder may become the next run's: no process of the run is left
	defer func() { folders.discard(lay.run, reuse) }()
	sealed, err := sealAll(spec, lay.work, &blanks{lay: lay})
	if err != nil {
		return Result{}, err
	}
	cfg, err := helperFor(spec, lay)
	if err != nil {
		return Result{}, err
	}
	cfg.Harness = harnessFiles(sealed)
	if cfg.release != nil {
		defer cfg.release()
	}
	// The artifact folder does not concern the experiment: it is made
	// once the runner has the request, while the experiment starts (a
	// goroutine of its own woke another thread first: 14 µs before the
	// request went).
	var merr error
	res, err := runHelper(ctx, spec, cfg, func() { merr = makeArtifactDir(spec.ArtifactDir) })
	if err == nil && merr != nil {
		err = merr
	}
	if err != nil {
		return res, err
	}
	err = finish(spec, lay, sealed, &res)
	reuse = err == nil && res.survivors == 0 && !res.Cancelled
	return res, err
}

func makeArtifactDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("artifact dir: %w", err)
	}
	return nil
}

func makeRunDir(lay layout) error {
	if folders.take(lay) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(lay.run), 0o755); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	err := os.Mkdir(lay.run, runDirMode)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("run dir: %w", err)
	}
	if err != nil { // it existed: it must be empty
		if names, err := readDirNames(lay.run); err != nil || len(names) > 0 {
			return fmt.Errorf("run dir %s must be a new or empty folder: %w", lay.run, errors.Join(err, fs.ErrExist))
		}
	}
	return makeRunParts(lay)
}

// Modes of a run folder and of what it holds.
const (
	runDirMode  = 0o700 // the run folder
	runPartMode = 0o755 // work/ and tmp/
	logMode     = 0o644 // stdout.log, stderr.log
)

// makeRunParts makes the work and temporary folders of a new run folder.
func makeRunParts(lay layout) error {
	for _, d := range []string{lay.work, lay.tmp} {
		if err := os.Mkdir(d, runPartMode); err != nil {
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
		ParentPID: os.Getpid(), Timeout: s.Timeout, Memory: s.MemoryBytes,
		Workspace: s.WorkspaceBytes, CPULimit: cpuLimit(s), FsizeLimit: fsizeLimit(s.MaxFileBytes),
		ASLimit: uint64(cooperativeAS), Watch: []string{lay.work, lay.tmp},
		Stdout: lay.stdout, Stderr: lay.stderr, Dir: lay.work, ExitSignals: true, NoGate: forceNoGate,
	}
	if s.Usage != nil {
		cfg.UsageEvery = UsageEvery
	}
	info, ok := Describe(s.Backend)
	if !ok {
		return cfg, fmt.Errorf("%w: backend %q cannot run an experiment", ErrInvalidSpec, s.Backend)
	}
	return cfg, info.launch(s, lay, &cfg)
}

// runHelper runs cfg on the persistent runner of s.SelfExe (started on
// first use, restarted when it died) and turns its report into a Result.
// Cancelling ctx sends a cancel request; after helperWaitDelay without a
// report the run counts as cancelled. sent runs once, when the runner
// first took the request.
func runHelper(ctx context.Context, s Spec, cfg helperConfig, sent func()) (Result, error) {
	res := Result{Backend: s.Backend, StartedAt: time.Now().UTC()}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("%w: start: %w", ErrHelper, err)
	}
	var rep helperReport
	for attempt := 0; ; attempt++ {
		c, id, ch, err := submit(s.SelfExe, cfg, s.Usage)
		if err != nil {
			return res, err
		}
		if attempt == 0 {
			sent()
		}
		var ok, cancelled bool
		rep, ok, cancelled = awaitReport(ctx, c, id, ch)
		res.FinishedAt = time.Now().UTC()
		switch {
		case !ok && cancelled:
			res.Cancelled = true
			return res, nil
		case !ok:
			<-c.dead
			if c.stopped && attempt == 0 {
				continue // a runner that stops reports every run it started: this one never started
			}
			return res, fmt.Errorf("%w: %w: %w", ErrHelper, ErrRunnerLost, c.err)
		case rep.Error == errStopping && attempt == 0:
			c.retire() // the run never started: once more, on a new runner
			continue
		case rep.Error == errStopping:
			return res, fmt.Errorf("%w: %w: %s", ErrHelper, ErrRunnerLost, rep.Error)
		case rep.Error != "":
			return res, fmt.Errorf("%w: %s", ErrHelper, rep.Error)
		case rep.ParentDied && ctx.Err() == nil:
			return res, fmt.Errorf("%w: %w: it was told to stop and killed the experiment", ErrHelper, ErrRunnerLost)
		}
		applyReport(&res, rep, ctx.Err() != nil)
		return res, nil
	}
}

// submit sends cfg to the runner of self, starting a new runner once
// when the current one died or stopped before it took the request.
func submit(self string, cfg helperConfig, usage func(Usage)) (*runnerClient, uint64, <-chan helperReport, error) {
	var err error
	for range 2 {
		var c *runnerClient
		if c, err = runnerFor(self); err != nil {
			return nil, 0, nil, err
		}
		id, ch, serr := c.start(cfg, usage)
		if serr == nil {
			return c, id, ch, nil
		}
		c.retire() // it cannot take runs (it died, or closed its stdin to stop): a new one
		err = serr
	}
	return nil, 0, nil, err
}

// awaitReport waits for run id's report, sending a cancel request when ctx
// ends. ok is false when no report came: the runner died, or it did not
// answer within helperWaitDelay of the cancel.
func awaitReport(ctx context.Context, c *runnerClient, id uint64, ch <-chan helperReport) (rep helperReport, ok, cancelled bool) {
	select {
	case rep, ok = <-ch:
		return rep, ok, false
	case <-ctx.Done():
	}
	c.cancel(id)
	timer := time.NewTimer(helperWaitDelay)
	defer timer.Stop()
	select {
	case rep, ok = <-ch:
		return rep, ok, true
	case <-timer.C:
		return rep, false, true
	}
}

func applyReport(res *Result, rep helperReport, ctxDone bool) {
	res.TimedOut = rep.TimedOut
	res.Cancelled = rep.Cancelled || ctxDone
	res.LimitExceeded = rep.Limit
	res.WallSeconds = rep.WallSeconds
	res.Containment = rep.Containment
	res.Launch = rep.Launch
	res.survivors = rep.Survivors
	if rep.PeakRSS > 0 { // a run too short for a sample of a live process has no figure
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

// fsizeLimit is RLIMIT_FSIZE for a largest file of max bytes: one byte
// more, so a file of exactly max bytes is written whole and one that the
// limit stopped (a writer ignoring SIGXFSZ meets EFBIG there) is one byte
// over max, which collection and the workspace walk see as too large.
func fsizeLimit(max int64) uint64 {
	if max <= 0 {
		return 0
	}
	return uint64(max) + 1
}
