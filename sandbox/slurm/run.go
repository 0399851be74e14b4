package slurm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// Remote is a receipt's remote block for a Slurm run.
type Remote struct {
	Scheduler string `json:"scheduler"`
	Job       string `json:"job"`
	Node      string `json:"node,omitempty"`
}

// Progress is what Run reports while a job waits: queued (with its job
// id), then running on its node.
type Progress struct {
	Remote Remote
	State  string // the scheduler's state: PENDING, RUNNING, …
}

// Job is one experiment to run as a Slurm job.
type Job struct {
	Key      string         // the study and the experiment: stable across restarts
	Spec     sandbox.Spec   // as for sandbox.Run; ArtifactDir receives the outputs
	Progress func(Progress) `json:"-"` // optional; called from Run's goroutine
}

// Statuses an Outcome may set instead of the one its Result implies.
const (
	Interrupted = "interrupted" // the job ended without running the experiment to its end
	Cancelled   = "cancelled"   // cancelled outside the study (scancel by an operator)
	TimedOut    = "timed_out"   // killed by its Slurm time limit
	Failed      = "failed"      // could not run on the node (e.g. the backend is unavailable there)
)

// Outcome is what one Slurm run gave.
type Outcome struct {
	Result sandbox.Result // as from sandbox.Run; judged like a local run when Status is ""
	Remote Remote
	Status string // "" or one of the statuses above
	Reason string // why, for a Status
}

// Run runs j as one Slurm job and collects its outputs into
// j.Spec.ArtifactDir. It returns at once with the recorded outcome when the
// job already finished (after a restart), re-attaches to a job still queued
// or running, and submits otherwise. Cancelling ctx cancels the job
// (scancel) and waits for its record. An error is a harness failure: the
// job could not be staged or submitted, or its outputs did not match the
// record.
func (c *Cluster) Run(ctx context.Context, j Job) (Outcome, error) {
	f := c.folderFor(j.Key)
	if rec, err := c.readRecord(f); err == nil {
		return c.finish(context.WithoutCancel(ctx), f, j, rec, false)
	}
	if ctx.Err() != nil && !c.submitted(f) {
		return Outcome{Result: sandbox.Result{Backend: c.cfg.Backend, Cancelled: true}}, nil
	}
	// A submission runs to its end even when ctx ends meanwhile (a killed
	// sbatch may still have queued the job); await then cancels it.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	id, err := c.submitOrAttach(sctx, f, j.Spec)
	cancel()
	if err != nil {
		return Outcome{Result: sandbox.Result{Backend: c.cfg.Backend}}, err
	}
	return c.await(ctx, f, j, id)
}

// Forget removes the job folder of key (its staged inputs, spec, record,
// outputs and logs) from SHARED_DIR. Call it once the experiment's receipt
// is recorded: until then the folder's record is what a restarted
// supervisor re-attaches to. A folder already gone is no error.
func (c *Cluster) Forget(key string) error {
	if err := c.cfg.Files.RemoveAll(c.folderFor(key).dir); err != nil {
		return fmt.Errorf("remove the job folder of %s: %w", key, err)
	}
	return nil
}

// await follows job id until its record appears or the scheduler says it
// ended without one.
func (c *Cluster) await(ctx context.Context, f jobFolder, j Job, id string) (Outcome, error) {
	states := c.poll.add(id, f.path(heartbeatFile))
	defer c.poll.remove(id)
	w := waiter{c: c, f: f, j: j, id: id, last: Progress{Remote: Remote{Scheduler: Scheduler, Job: id}}}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if rec, err := c.readRecord(f); err == nil {
			return c.finish(context.WithoutCancel(ctx), f, j, rec, w.cancelled)
		}
		if w.ended != nil && time.Since(*w.ended) > c.cfg.RecordLag {
			return w.without(), nil
		}
		select {
		case <-ctx.Done():
			if !w.cancelled {
				w.cancelled = true
				w.cancelErr = c.cancel(context.WithoutCancel(ctx), id)
			}
			ctx = context.WithoutCancel(ctx)
		case st := <-states:
			w.observe(st)
		case <-tick.C:
			w.liveUsage()
		}
	}
}

// cancel runs scancel on id.
func (c *Cluster) cancel(ctx context.Context, id string) error {
	ctx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if _, err := c.cfg.Exec.Output(ctx, "scancel", id); err != nil {
		return fmt.Errorf("cancel job %s: %w", id, err)
	}
	return nil
}

// waiter is the state of one await.
type waiter struct {
	c         *Cluster
	f         jobFolder
	j         Job
	id        string
	last      Progress
	state     jobState
	ended     *time.Time // when the scheduler first said the job ended (or forgot it)
	cancelled bool       // we ran scancel
	cancelErr error
	usageRead time.Time // when liveUsage last read the job's figures
	usageAt   time.Time // the node's time of the last figures handed on
}

// liveUsage hands the job's latest live figures (written on its node about
// once a second) to j.Spec.Usage: at most once per sandbox.UsageEvery,
// while the scheduler says the job runs, and only figures other than the
// last ones (by the node's sample time: a time far ahead must not freeze
// them) with no negative value.
func (w *waiter) liveUsage() {
	if w.j.Spec.Usage == nil || w.state.State != "RUNNING" || time.Since(w.usageRead) < sandbox.UsageEvery {
		return
	}
	w.usageRead = time.Now()
	var u sandbox.Usage
	if w.c.readJSON(w.f.path(usageFile), &u) != nil || u.At.Equal(w.usageAt) || u.CPUSeconds < 0 || u.RSSBytes < 0 || u.Processes < 0 {
		return // none, the same as last time, or not figures at all
	}
	w.usageAt = u.At
	w.j.Spec.Usage(u)
}

// observe takes one poll's answer about the job.
func (w *waiter) observe(st jobState) {
	if st.Known && st.State == "" {
		return // the poll failed: no news
	}
	w.state = st
	if st.Known && st.active() {
		w.ended = nil
		p := Progress{Remote: Remote{Scheduler: Scheduler, Job: w.id, Node: st.Node}, State: st.State}
		if p != w.last && w.j.Progress != nil {
			w.j.Progress(p)
		}
		w.last = p
		return
	}
	if w.ended == nil {
		now := time.Now()
		w.ended = &now
	}
}

// without is the outcome of a job that ended with no record.
func (w *waiter) without() Outcome {
	o := Outcome{Result: sandbox.Result{Backend: w.c.cfg.Backend, FinishedAt: time.Now().UTC()},
		Remote: Remote{Scheduler: Scheduler, Job: w.id, Node: w.state.Node}}
	switch {
	case w.cancelled:
		o.Result.Cancelled = true
	case !w.state.Known:
		o.Status, o.Reason = Interrupted, fmt.Sprintf("slurm job %s vanished from the scheduler without a terminal record", w.id)
	default:
		o.Status, o.Reason = stateStatus(w.id, w.state)
	}
	return o
}

// stateStatus interprets a job that ended, by its scheduler state.
func stateStatus(id string, st jobState) (string, string) {
	switch st.State {
	case "TIMEOUT", "DEADLINE":
		return TimedOut, fmt.Sprintf("slurm job %s was killed by its time limit (%s)", id, st.State)
	case "CANCELLED":
		return Cancelled, fmt.Sprintf("slurm job %s was cancelled outside the study (scancel)", id)
	}
	return Interrupted, fmt.Sprintf("slurm job %s ended %s without a terminal record", id, st.State)
}

// submitted reports whether f's job may exist: sbatch ran for it.
func (c *Cluster) submitted(f jobFolder) bool {
	return c.exists(f.path(submitFile))
}

func (c *Cluster) readRecord(f jobFolder) (record, error) {
	var rec record
	err := c.readJSON(f.path(recordFile), &rec)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rec, fmt.Errorf("job record: %w", err)
	}
	return rec, err
}
