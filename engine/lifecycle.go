package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/machine"
)

// This file is the lifecycle of a supervised study, the same for the CLI
// and the TUI: OpenStudy opens it, Run holds the campaign lock and the
// sandbox runner only while it supervises, Control stops it, and Close
// releases the rest.

// OpenStudy opens a supervisor for the study in c with the agent its frozen
// contract names, built from the agent backend table (opt.SelfExe is this
// binary). It refuses a study that can no longer resume, and one another
// supervisor owns (ErrLocked).
func OpenStudy(ctx context.Context, c Campaign, opt Options) (*Supervisor, error) {
	return OpenStudyLocked(ctx, c, nil, opt)
}

// OpenStudyLocked is OpenStudy with the campaign lock this process already
// holds (CreateStudyLocked), which the supervisor takes over; nil takes the
// lock. An error releases lock.
func OpenStudyLocked(ctx context.Context, c Campaign, lock *Lock, opt Options) (*Supervisor, error) {
	agent, err := studyAgent(ctx, c, opt)
	if err != nil {
		_ = lock.Release()
		return nil, err
	}
	if lock == nil {
		return Open(ctx, c, agent, opt)
	}
	return openLocked(ctx, c, lock, agent, opt)
}

// studyAgent checks that the study in c may still run and builds its agent.
func studyAgent(ctx context.Context, c Campaign, opt Options) (provider.Agent, error) {
	v, err := OpenView(ctx, c)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	status, err := checkResumable(ctx, v)
	if err != nil {
		return nil, err
	}
	k, err := LoadContract(ctx, v.s)
	if err != nil {
		return nil, err
	}
	if err := checkLocalBackend(ctx, status, k); err != nil {
		return nil, err
	}
	return NewAgent(k, opt.SelfExe)
}

// checkLocalBackend refuses to resume a study whose experiments run here
// when its frozen execution backend no longer passes its probe here: every
// experiment would fail at once, turn after turn. A budget_exhausted study
// is let through (it only stops and writes its reports), and so is a pool
// of workers only (each probes its own backend).
func checkLocalBackend(ctx context.Context, status Status, k Contract) error {
	if len(k.Workers) > 0 && !slices.ContainsFunc(k.Workers, func(w FrozenWorker) bool { return w.Kind == machine.KindLocal }) {
		return nil
	}
	if status == StatusBudgetExhausted {
		return nil
	}
	_, err := resolveBackend(ctx, string(k.ExecutionBackend), sandbox.Probe)
	return err
}

// checkResumable refuses a study that ended for good (a budget_exhausted
// one may run again: it stops at once and writes its reports), and returns
// the status it read.
func checkResumable(ctx context.Context, v *View) (Status, error) {
	snap, err := v.DisplaySnapshot(ctx)
	if err != nil {
		return "", err
	}
	if Terminal(snap.Status) && snap.Status != StatusBudgetExhausted {
		return "", fmt.Errorf("study %s is %s; it cannot be resumed: %w", v.c.Dir, snap.Status, ErrInvalid)
	}
	return snap.Status, nil
}

// Command is an operator's request to stop a study.
type Command string

// The commands Control carries out.
const (
	Pause  Command = "pause"
	Cancel Command = "cancel"
)

// Requested is what Control reports when it left the command to a live
// supervisor in another process: not a status the study is in yet.
const Requested Status = "requested"

// stopStatus is the status each command stops a supervisor with.
var stopStatus = map[Command]Status{Pause: StatusPaused, Cancel: StatusCancelled}

// Control pauses or cancels the study in c. Given sup, the study's
// supervisor in this process with a run pending or in flight, it stops sup
// at its next boundary and waits until Run has returned (and so released
// the lock), reporting the status the study stopped with. Otherwise it
// goes through the study's control row (RequestControl): a supervisor in
// any process acts on it within a second, and with none it applies at once.
func Control(ctx context.Context, c Campaign, sup *Supervisor, cmd Command) (Status, error) {
	status, ok := stopStatus[cmd]
	if !ok {
		return "", fmt.Errorf("unknown control %q: %w", cmd, ErrInvalid)
	}
	if sup == nil || !sup.pending() {
		return RequestControl(ctx, c, cmd)
	}
	sup.Stop(status)
	sup.mu.Lock()
	done := sup.done
	sup.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	sup.mu.Lock()
	defer sup.mu.Unlock()
	return sup.final, nil
}

// Run supervises the study until it stops and returns its final status.
// ctx ending (SIGINT/SIGTERM) cancels the study. Run takes the campaign
// lock again when an earlier Run released it, and refuses a study that
// ended meanwhile; when it returns, the lock and, with the last run of
// this process, the sandbox runner are released, so another process may
// resume the study at once. After a Stop, Rearm before running again.
func (sv *Supervisor) Run(ctx context.Context) (final Status, err error) {
	defer func() { sv.endRun(final) }()
	if err := sv.acquire(ctx); err != nil {
		return "", err
	}
	runStarted()
	defer runEnded()
	return sv.run(ctx)
}

// acquire takes the lock if an earlier run released it and checks that
// the study may still run.
func (sv *Supervisor) acquire(ctx context.Context) error {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.lock == nil {
		lock, err := AcquireLock(sv.c)
		if err != nil {
			return err
		}
		sv.lock = lock
	}
	if _, err := checkResumable(ctx, sv.View()); err != nil {
		_ = sv.lock.Release()
		sv.lock = nil
		return err
	}
	return nil
}

// endRun releases the lock and ends the pending run.
func (sv *Supervisor) endRun(final Status) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	_ = sv.lock.Release()
	sv.lock, sv.final = nil, final
	if sv.pendingLocked() {
		close(sv.done)
	}
}

// pending reports whether a run is expected or in flight: from Open or
// Rearm until Run returns.
func (sv *Supervisor) pending() bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.pendingLocked()
}

func (sv *Supervisor) pendingLocked() bool {
	select {
	case <-sv.done:
		return false
	default:
		return true
	}
}

// Rearm clears a pause or cancel asked for with Stop, so that Run can
// supervise the study again after it returned (resume in the same process).
func (sv *Supervisor) Rearm() {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.stop = goOn
	if !sv.pendingLocked() {
		sv.done = make(chan struct{})
	}
}

// Close releases the store, and the lock if no Run released it.
func (sv *Supervisor) Close() error {
	sv.mu.Lock()
	lock := sv.lock
	sv.lock = nil
	sv.mu.Unlock()
	return errors.Join(sv.s.Close(), lock.Release())
}

// runs counts the supervisors running in this process: the sandbox runner
// is process-wide, so the last one to stop closes it.
var runs struct {
	sync.Mutex
	n int
}

func runStarted() {
	runs.Lock()
	defer runs.Unlock()
	runs.n++
}

func runEnded() {
	runs.Lock()
	defer runs.Unlock()
	if runs.n--; runs.n == 0 {
		sandbox.CloseRunners()
	}
}
