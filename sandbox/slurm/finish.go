package slurm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// finish turns a job's record into the outcome and copies its outputs into
// the campaign, checking each against the hash the job recorded.
func (c *Cluster) finish(ctx context.Context, f jobFolder, j Job, rec record, cancelled bool) (Outcome, error) {
	o := Outcome{Result: rec.Result, Remote: Remote{Scheduler: Scheduler, Job: rec.Job, Node: rec.Node}}
	if o.Result.Backend == "" {
		o.Result.Backend = c.cfg.Backend
	}
	// A stop decides before an error: Slurm's SIGTERM reaches every process
	// of the job, the sandbox runner too, whose loss is then no failure.
	switch {
	case rec.Stopped == stopHeartbeat:
		o.Status, o.Reason = Interrupted, fmt.Sprintf("slurm job %s stopped its experiment: the supervisor's heartbeat was older than %v", rec.Job, c.cfg.Grace)
	case cancelled:
		o.Result.Cancelled = true
		c.settle(ctx, rec.Job)
	case rec.Stopped == stopSignal:
		o.Status, o.Reason = c.signalled(ctx, rec.Job)
	case rec.Error != "":
		o.Status, o.Reason = Failed, rec.Error
	}
	return o, collect(c.cfg.Files, f, j.Spec.ArtifactDir, rec.Result)
}

// signalled interprets a job stopped by Slurm's SIGTERM that we did not
// cancel: its state says whether the time limit or an operator did it.
func (c *Cluster) signalled(ctx context.Context, id string) (string, string) {
	st := c.settle(ctx, id)
	if st.State == "" {
		st.State = "UNKNOWN"
	}
	if st.State == "CANCELLED" || st.State == "TIMEOUT" || st.State == "DEADLINE" {
		return stateStatus(id, st)
	}
	return Interrupted, fmt.Sprintf("slurm job %s was stopped by a signal (scheduler state %s)", id, st.State)
}

// settle waits (at most a minute) until the scheduler no longer holds job
// id as active — a record is written before the job has ended — and
// returns its last state.
func (c *Cluster) settle(ctx context.Context, id string) jobState {
	deadline := time.Now().Add(time.Minute)
	for {
		st := c.states(ctx, []string{id})[id]
		if (st.Known && st.State == "") || st.active() {
			if time.Now().Before(deadline) {
				time.Sleep(pollMin)
				continue
			}
		}
		return st
	}
}

// collect copies the recorded artifacts and the two logs from the job's
// out folder into dst, each checked against the record's hash.
func collect(files Files, f jobFolder, dst string, res sandbox.Result) error {
	src := f.path(outDir)
	for rel, a := range res.Artifacts {
		if err := files.Get(filepath.Join(src, rel), filepath.Join(dst, rel), 0o444, a.SHA256); err != nil {
			return fmt.Errorf("collect %s: %w", rel, err)
		}
	}
	for _, log := range []string{"stdout.log", "stderr.log"} {
		err := files.Get(filepath.Join(src, log), filepath.Join(dst, log), 0o644, "")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("collect %s: %w", log, err)
		}
	}
	return nil
}
