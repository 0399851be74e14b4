package engine

import (
	"context"
	"errors"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/machine"
	"github.com/simjecture/simjecture/store"
)

// The executor's side of the pool: placement, runs on workers, and
// re-attaching to the experiments a previous supervisor left on a worker.

// slots is the pool, or this host alone; e.mu held.
func (e *executor) slots() []*slot {
	if e.pool == nil {
		e.pool = []*slot{localSlot(e.k, e.cores, e.memMB)}
	}
	return e.pool
}

// reserve books r's resources on s; e.mu held.
func (e *executor) reserve(r Receipt, s *slot) {
	s.used.CPUs += r.Resources.CPUs
	s.used.MemoryMB += r.Resources.MemoryMB
	s.jobs++
	e.running[r.ID] = &runningExp{res: r.Resources, cancel: func() {}, slot: s}
}

// place names the machine r was admitted to in its receipt.
func (e *executor) place(r *Receipt) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.running[r.ID].slot
	r.Machine = s.id
	if s.m != nil {
		r.Remote = &machine.Remote{Host: s.remoteOf, Job: jobID(e.k.StudyID, r.ID)}
	}
}

// slotOf is the slot running experiment id was admitted to.
func (e *executor) slotOf(id string) *slot {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running[id].slot
}

// runOn runs r on the machine it was admitted to. A worker that names
// where the run happened (a Slurm job and its node) updates r.Remote.
func (e *executor) runOn(ctx context.Context, r *Receipt, spec sandbox.Spec) (sandbox.Result, error) {
	s := e.slotOf(r.ID)
	if s.m == nil {
		return e.run(ctx, spec)
	}
	var res sandbox.Result
	var remote machine.Remote
	var err error
	spec.Usage = func(u sandbox.Usage) { e.live.add(r.ID, u) }
	defer e.live.drop(r.ID)
	if w, ok := s.m.(machine.Watcher); ok {
		res, remote, err = w.RunWatched(ctx, jobID(e.k.StudyID, r.ID), spec, func(p machine.Remote) { e.placed(ctx, r.ID, s.id, p) })
	} else {
		res, remote, err = s.m.Run(ctx, jobID(e.k.StudyID, r.ID), spec)
	}
	r.Remote = mergeRemote(r.Remote, remote)
	return res, err
}

// forget lets the worker experiment id ran on drop what it kept of the job
// (machine.Forgetter: a Slurm job's folder in SHARED_DIR), now that its
// final receipt is recorded. Not after a lost run: its job may still be
// there. A failure leaves files behind and is logged, never a harness error.
func (e *executor) forget(ctx context.Context, id string) {
	s := e.slotOf(id)
	f, ok := s.m.(machine.Forgetter)
	if !ok {
		return
	}
	if err := f.Forget(context.WithoutCancel(ctx), jobID(e.k.StudyID, id)); err != nil {
		e.log.Warn("worker kept a finished job's files", "experiment", id, "machine", s.id, "err", err)
	}
}

// placed records where a running experiment stands on its worker.
func (e *executor) placed(ctx context.Context, id, machineID string, p machine.Remote) {
	err := e.s.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		cur, err := getReceipt(tx, id)
		if err != nil || cur.Status != ExpRunning {
			return err
		}
		cur.Remote = mergeRemote(cur.Remote, p)
		if _, err := putReceipt(tx, cur); err != nil {
			return err
		}
		return appendEvent(tx, ExperimentPlacedPayload{Experiment: id, Job: p.Job, Machine: machineID, Node: p.Node, State: p.State})
	})
	if err != nil {
		e.report(ctx, "record where an experiment runs", err)
		return
	}
	e.notify()
}

// stoppedOutside turns a run its worker's operator stopped (scancel) into
// a cancelled receipt naming the reason.
func stoppedOutside(r Receipt, res sandbox.Result, err error) (Receipt, bool) {
	if !errors.Is(err, machine.ErrStoppedOutside) {
		return r, false
	}
	res.Cancelled = false
	final := finishReceipt(r, res, nil)
	final.Status, final.Error = ExpCancelled, err.Error()
	return final, true
}

// lostOnWorker reports whether err means the worker lost the experiment or
// could not be reached about it, or the local sandbox runner stopped it
// (killed, or told to stop): neither transport uncertainty nor a runner's
// end is ever an experiment's failure; it is recorded interrupted.
func lostOnWorker(err error) (error, bool) {
	switch {
	case err == nil:
		return nil, false
	case errors.Is(err, machine.ErrLost), errors.Is(err, machine.ErrUnreachable), errors.Is(err, machine.ErrHostKey),
		errors.Is(err, sandbox.ErrRunnerLost):
		return err, true
	}
	return err, false
}

// writeLost records r interrupted, with the reason.
func (e *executor) writeLost(ctx context.Context, r Receipt, reason error) error {
	return e.s.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		cur, err := getReceipt(tx, r.ID)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		cur.Status, cur.FinishedAt, cur.Error = ExpInterrupted, &now, reason.Error()
		if r.Remote != nil {
			cur.Remote = r.Remote
		}
		if _, err := putReceipt(tx, cur); err != nil {
			return err
		}
		return appendEvent(tx, ExperimentInterruptedPayload{Experiment: r.ID})
	})
}

// reattach takes over the running receipts a previous supervisor left on a
// worker of the pool: the same job id finds the same remote experiment,
// which the worker reports finished, still running, or lost.
func (e *executor) reattach(ctx context.Context, running []Receipt) error {
	if e.adopted {
		return nil
	}
	e.adopted = true
	for _, r := range running {
		if r.Remote == nil || !e.adopt(r) {
			continue
		}
		e.launch(ctx, r)
	}
	return nil
}

// adopt reserves a left-over remote receipt on its worker; false when this
// executor runs it already or the worker is not in the pool.
func (e *executor) adopt(r Receipt) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.running[r.ID]; ok {
		return false
	}
	for _, s := range e.slots() {
		if s.id == r.Machine && s.m != nil {
			e.reserve(r, s)
			return true
		}
	}
	return false
}

// mergeRemote is the receipt's remote after a run: what admission recorded
// (an SSH worker's host and job) with what the worker reported filled in
// (its node; a Slurm job, its node and state). Nil when neither names one.
func mergeRemote(cur *machine.Remote, got machine.Remote) *machine.Remote {
	if cur == nil {
		if got == (machine.Remote{}) {
			return nil
		}
		return &got
	}
	out := *cur
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&out.Host, got.Host}, {&out.Scheduler, got.Scheduler}, {&out.Job, got.Job}, {&out.Node, got.Node}, {&out.State, got.State},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	return &out
}
