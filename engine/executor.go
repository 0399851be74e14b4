package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/machine"
	"github.com/simjecture/simjecture/store"
)

// RunFunc runs one experiment; sandbox.Run in production.
type RunFunc func(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error)

// executor admits queued experiments by CPU slots and memory and runs them.
type executor struct {
	k       Contract
	c       Campaign
	s       *store.Store
	backend sandbox.Backend
	selfExe string
	cores   int
	memMB   int64
	run     RunFunc
	notify  func()
	log     *slog.Logger
	failed  func(op string, err error) // counts a failed store call (Supervisor.storeFailed)
	pool    []*slot                    // the machines (pool.go); nil: this host alone, by cores and memMB
	poolOK  *bool                      // the pool's recorded reachability (poolwatch.go); nil until read
	adopted bool                       // the first tick re-attached the left-over remote experiments
	live    remoteLive                 // the live figures of the experiments on workers (procremote.go)

	mu         sync.Mutex
	running    map[string]*runningExp
	stopStatus ExpStatus // status of experiments stopped because the study stopped
	wg         sync.WaitGroup
}

type runningExp struct {
	cancel context.CancelFunc
	res    Resources
	slot   *slot
}

// loop admits work and forwards cancel requests until ctx ends, then stops
// every running experiment and waits for them.
func (e *executor) loop(ctx context.Context, poll time.Duration, wake <-chan struct{}) {
	runCtx, stopAll := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		stopAll()
		e.wg.Wait()
		closePool(e.pool)
	}()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := e.tick(runCtx); err != nil && ctx.Err() == nil {
			e.report(runCtx, "admit the queued experiments", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}

// report counts a failed store call of the executor and records it as a
// harness_error event where the store still takes it.
func (e *executor) report(ctx context.Context, op string, err error) {
	e.failed(op, err)
	werr := e.s.Tx(ctx, func(tx *store.Tx) error {
		return appendEvent(tx, HarnessErrorPayload{Where: "executor", Error: storeError(op, err).Error()})
	})
	if werr != nil {
		e.log.Error("record executor error", "err", werr)
	}
}

func (e *executor) tick(ctx context.Context) error {
	var queued, running []Receipt
	err := e.s.Read(ctx, func(tx *store.Tx) (err error) {
		if queued, err = listDocs[Receipt](tx, store.Experiments, string(ExpQueued)); err != nil {
			return err
		}
		running, err = listDocs[Receipt](tx, store.Experiments, string(ExpRunning))
		return err
	})
	if err != nil {
		return fmt.Errorf("executor: %w", err)
	}
	e.forwardCancels(running)
	if err := e.watchPool(ctx, len(queued) > 0); err != nil {
		return err
	}
	if err := e.reattach(ctx, running); err != nil {
		return err
	}
	for _, r := range queued {
		if why := e.capabilityRefusal(r); why != nil {
			e.refuse(ctx, r, why)
			continue
		}
		if e.admit(ctx, r) {
			if err := e.start(ctx, r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *executor) forwardCancels(running []Receipt) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range running {
		if x, ok := e.running[r.ID]; ok && r.CancelRequested != "" {
			x.cancel()
		}
	}
}

// admit reserves resources for r on the first machine of the pool that
// has them free and can be reached.
func (e *executor) admit(ctx context.Context, r Receipt) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.running[r.ID]; ok {
		return false
	}
	for _, s := range e.slots() {
		if !s.fits(r.Resources) {
			continue
		}
		if ok, wait := s.capabilityFit(ctx, e.k, r); wait {
			return false // its first report of its capabilities decides
		} else if !ok {
			continue
		}
		switch reach := s.reachable(ctx); {
		case reach == nil:
			e.reserve(r, s)
			return true
		case errors.Is(reach, machine.ErrConnecting):
			return false // its first connection decides: wait for it
		}
	}
	return false
}

// stopWith sets how experiments stopped by the study's end are recorded.
func (e *executor) stopWith(status ExpStatus) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopStatus = status
}

func (e *executor) release(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.running[id]; ok {
		x.slot.used.CPUs -= x.res.CPUs
		x.slot.used.MemoryMB -= x.res.MemoryMB
		x.slot.jobs--
	}
	delete(e.running, id)
}

func (e *executor) start(ctx context.Context, r Receipt) error {
	now := time.Now().UTC()
	r.Status, r.StartedAt, r.IsolationBackend = ExpRunning, &now, e.backend
	e.place(&r)
	err := e.s.Tx(ctx, func(tx *store.Tx) error {
		cur, err := getReceipt(tx, r.ID)
		if err != nil || cur.Status != ExpQueued {
			return errSkip
		}
		if _, err := putReceipt(tx, r); err != nil {
			return err
		}
		return appendEvent(tx, ExperimentStartedPayload{Experiment: r.ID, Backend: e.backend})
	})
	if err == errSkip {
		e.release(r.ID)
		return nil
	}
	if err != nil {
		e.release(r.ID)
		return err
	}
	e.notify()
	e.launch(ctx, r)
	return nil
}

// launch runs the admitted experiment r in its own goroutine.
func (e *executor) launch(ctx context.Context, r Receipt) {
	runCtx, cancel := context.WithCancel(ctx)
	e.mu.Lock()
	e.running[r.ID].cancel = cancel
	e.mu.Unlock()
	e.wg.Go(func() {
		defer cancel()
		defer e.release(r.ID)
		e.execute(runCtx, r)
	})
}

var errSkip = fmt.Errorf("skip")

func (e *executor) execute(ctx context.Context, r Receipt) {
	var res sandbox.Result
	spec, err := e.spec(r)
	if err == nil {
		res, err = e.runOn(ctx, &r, spec)
	}
	if final, ok := stoppedOutside(r, res, err); ok {
		if e.recordFinal(context.WithoutCancel(ctx), func() error { return e.writeFinal(ctx, final, sandbox.Result{}) }) {
			e.forget(ctx, r.ID)
		}
		e.notify()
		return
	}
	if lost, ok := lostOnWorker(err); ok {
		e.recordFinal(context.WithoutCancel(ctx), func() error { return e.writeLost(ctx, r, lost) })
		e.notify()
		return
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Stopped before it started: the stop decides its status, not the failed start.
		res, err = sandbox.Result{Backend: res.Backend, Cancelled: true}, nil
	}
	if full, ok := noSpace(err); ok {
		err = full
		e.spaceError(context.WithoutCancel(ctx), r.ID, err)
	}
	final := finishReceipt(r, res, err)
	if e.recordFinal(context.WithoutCancel(ctx), func() error { return e.writeFinal(ctx, final, res) }) {
		e.forget(ctx, r.ID)
	}
	e.notify()
}

// writeFinal records the receipt's final state and its event.
func (e *executor) writeFinal(ctx context.Context, final Receipt, res sandbox.Result) error {
	return e.s.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		if cur, err := getReceipt(tx, final.ID); err == nil {
			final.CancelRequested = cur.CancelRequested
		}
		if res.Cancelled && final.CancelRequested == "" {
			final.Status, final.Error = e.stoppedStatus(), "stopped because the study stopped"
		}
		if _, err := putReceipt(tx, final); err != nil {
			return err
		}
		return appendEvent(tx, ExperimentFinishedPayload{Experiment: final.ID, Status: final.Status,
			WallSeconds: final.WallSeconds, LimitExceeded: final.LimitExceeded})
	})
}

func (e *executor) stoppedStatus() ExpStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopStatus == "" {
		return ExpCancelled
	}
	return e.stopStatus
}

func (e *executor) spec(r Receipt) (sandbox.Spec, error) {
	sealed := make([]sandbox.SealedFile, 0, len(r.Inputs))
	for rel, sum := range r.Inputs {
		sealed = append(sealed, sandbox.SealedFile{Rel: rel, HostPath: e.c.SealedBlob(sum), SHA256: sum})
	}
	sort.Slice(sealed, func(i, j int) bool { return sealed[i].Rel < sealed[j].Rel })
	spec := sandbox.Spec{
		Backend: e.backend, SelfExe: e.selfExe, RunDir: e.c.Scratch() + "/" + r.ID, ArtifactDir: e.c.ArtifactDir(r.ID),
		Sealed: sealed, Command: commandFor(r), Outputs: r.Outputs,
		Env:            map[string]string{"SIMJECTURE_EXPERIMENT": r.ID, "SIMJECTURE_CPU_SLOTS": fmt.Sprint(r.Resources.CPUs)},
		Timeout:        time.Duration(r.Timeout * float64(time.Second)),
		CPUs:           r.Resources.CPUs,
		MemoryBytes:    r.Resources.MemoryMB << 20,
		MaxFileBytes:   r.Resources.MaxFileMB << 20,
		WorkspaceBytes: ExperimentWorkspaceBytes,
	}
	if r.Capability != "" {
		return spec, capabilitySpec(e.k, r, &spec)
	}
	return spec, nil
}

func commandFor(r Receipt) []string {
	var argv []string
	switch {
	case strings.HasSuffix(r.Source, ".py"):
		argv = []string{"python3", "/work/" + r.Source}
	case strings.HasSuffix(r.Source, ".sh"):
		argv = []string{"sh", "/work/" + r.Source}
	default:
		argv = []string{"/work/" + r.Source}
	}
	return append(argv, r.Args...)
}

func finishReceipt(r Receipt, res sandbox.Result, err error) Receipt {
	now := time.Now().UTC()
	r.FinishedAt = &now
	if err != nil {
		r.Status, r.Error = ExpFailed, err.Error()
		return r
	}
	if res.Backend != "" {
		r.IsolationBackend = res.Backend
	}
	r.ReturnCode, r.Signal, r.TimedOut, r.PeakRSSBytes = res.ReturnCode, res.Signal, res.TimedOut, res.PeakRSSBytes
	wall := res.WallSeconds
	r.WallSeconds = &wall
	if res.LimitExceeded != "" {
		l := res.LimitExceeded
		r.LimitExceeded = &l
	}
	r.Artifacts, r.RejectedOutputs, r.Containment = res.Artifacts, res.RejectedOutputs, res.Containment
	if r.RejectedOutputs == nil {
		r.RejectedOutputs = []sandbox.Rejected{}
	}
	if r.Artifacts == nil {
		r.Artifacts = map[string]sandbox.Artifact{}
	}
	r.MissingOutputs, r.InputMutations = nonNil(res.MissingOutputs), nonNil(res.InputMutations)
	r.StdoutTail, r.StderrTail = res.StdoutTail, res.StderrTail
	r.Logs = logHashes(r.ArtifactDir)
	r.Status = statusOf(r, res)
	return r
}

func statusOf(r Receipt, res sandbox.Result) ExpStatus {
	switch {
	case res.Cancelled:
		return ExpCancelled
	case res.TimedOut:
		return ExpTimedOut
	case r.ReturnCode != nil && *r.ReturnCode == 0 && r.LimitExceeded == nil && len(r.MissingOutputs) == 0 &&
		len(r.RejectedOutputs) == 0 && len(r.InputMutations) == 0:
		return ExpSucceeded
	}
	return ExpFailed
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
