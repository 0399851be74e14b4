package machine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/slurm"
)

// The Slurm row of the machines table: a cluster whose Slurm clients
// (sbatch, squeue, sacct, scancel, sinfo) run on this host and whose
// SHARED_DIR (the profile's root) is mounted here and on every node, or,
// with a login node (--host), both reached there over SSH (slurmlogin.go).
// sandbox/slurm does the work; this file adapts a profile to it.

// ErrStoppedOutside is a run the worker's own operator stopped (an scancel
// outside the study): the receipt is cancelled, with the reason.
var ErrStoppedOutside = errors.New("stopped outside the study")

var slurmNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

func checkSlurm(p Profile) error {
	checks := []func(Profile) error{checkIDField, checkSlurmHost, checkSlurmNames, checkRoot, checkCapacity, checkBackend}
	for _, c := range checks {
		if err := c(p); err != nil {
			return err
		}
	}
	return nil
}

// checkSlurmHost checks the login node's SSH fields when there is one
// (--host); without it the clients and SHARED_DIR are this host's. The
// jobs run as the login, so --run-as has no meaning here.
func checkSlurmHost(p Profile) error {
	if p.Host == "" {
		return nil
	}
	if p.RunAs != "" {
		return fieldError("run-as", "a Slurm job runs as the login account; --run-as is for SSH workers")
	}
	for _, c := range []func(Profile) error{checkHost, checkPort, checkAccounts} {
		if err := c(p); err != nil {
			return err
		}
	}
	return nil
}

func checkSlurmNames(p Profile) error {
	for field, v := range map[string]string{"partition": p.Partition, "account": p.Account} {
		if v != "" && !slurmNamePattern.MatchString(v) {
			return fieldError(field, "%q is not a Slurm name ([A-Za-z0-9_.-], at most 64)", v)
		}
	}
	return nil
}

// stateSlurm is doctor's line: sinfo and the partition, no job.
func stateSlurm(ctx context.Context, p Profile, o Options) (string, bool) {
	c, err := slurm.New(slurmConfig(p, o))
	if err != nil {
		return err.Error(), false
	}
	part, err := c.Partition(ctx)
	if err != nil {
		return "unreachable: " + err.Error(), false
	}
	return fmt.Sprintf("ready (slurm partition %s, %s)", part, p.ExecutionBackend), true
}

// slurmMachine is a Slurm cluster of the pool.
type slurmMachine struct {
	p Profile
	c *slurm.Cluster

	mu        sync.Mutex
	reachedAt time.Time
}

func openSlurm(p Profile, o Options) (Machine, error) {
	c, err := slurm.New(slurmConfig(p, o))
	if err != nil {
		return nil, err
	}
	return &slurmMachine{p: p, c: c}, nil
}

// slurmConfig is p's cluster: with a login node (--host) its clients and
// SHARED_DIR are reached over SSH, else they are this host's.
func slurmConfig(p Profile, o Options) slurm.Config {
	cfg := slurm.Config{Worker: p.ID, Partition: p.Partition, Account: p.Account, Root: p.Root,
		Backend: p.ExecutionBackend, Self: o.SelfExe, Grace: time.Duration(p.Grace()) * time.Second}
	if p.Host != "" {
		l := newLogin(p)
		cfg.Exec, cfg.Files = loginExec{l: l}, loginFiles{l: l}
	}
	return cfg
}

// Forget removes the job's folder from SHARED_DIR (Forgetter).
func (m *slurmMachine) Forget(_ context.Context, job string) error { return m.c.Forget(job) }

func (m *slurmMachine) ID() string   { return m.p.ID }
func (m *slurmMachine) Close() error { return nil }

// Reachable runs sinfo on the partition, at most every 10 s.
func (m *slurmMachine) Reachable(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.reachedAt) < 10*time.Second {
		return nil
	}
	if _, err := m.c.Partition(ctx); err != nil {
		return fmt.Errorf("worker %s: %w: %w", m.p.ID, err, ErrUnreachable)
	}
	m.reachedAt = time.Now()
	return nil
}

// Run runs the experiment as one job. A job that ended without running it
// to its end is ErrLost (with the reason); one an operator cancelled is
// ErrStoppedOutside; one killed by its time limit a timed-out run.
func (m *slurmMachine) Run(ctx context.Context, job string, spec sandbox.Spec) (sandbox.Result, Remote, error) {
	return m.RunWatched(ctx, job, spec, nil)
}

// RunWatched is Run, reporting the job queued (with its id), then running
// on its node.
func (m *slurmMachine) RunWatched(ctx context.Context, job string, spec sandbox.Spec, report func(Remote)) (sandbox.Result, Remote, error) {
	spec.Backend = m.p.ExecutionBackend
	j := slurm.Job{Key: job, Spec: spec}
	if report != nil {
		j.Progress = func(p slurm.Progress) {
			state := "queued"
			if p.State != "PENDING" {
				state = "running"
			}
			report(Remote{Scheduler: slurm.Scheduler, Job: p.Remote.Job, Node: p.Remote.Node, State: state})
		}
	}
	o, err := m.c.Run(ctx, j)
	remote := Remote{Scheduler: slurm.Scheduler, Job: o.Remote.Job, Node: o.Remote.Node}
	if err != nil {
		return o.Result, remote, fmt.Errorf("worker %s: %w", m.p.ID, err)
	}
	res := o.Result
	switch o.Status {
	case slurm.Interrupted:
		return res, remote, fmt.Errorf("worker %s: %s: %w", m.p.ID, o.Reason, ErrLost)
	case slurm.Failed:
		return res, remote, fmt.Errorf("worker %s: %s", m.p.ID, o.Reason)
	case slurm.Cancelled:
		return res, remote, fmt.Errorf("worker %s: %s: %w", m.p.ID, o.Reason, ErrStoppedOutside)
	case slurm.TimedOut:
		res.TimedOut, res.LimitExceeded, res.Cancelled = true, sandbox.LimitWallTime, false
	}
	return res, remote, nil
}

// prepareSlurm ships this binary to ROOT/bin (the shared folder).
func prepareSlurm(ctx context.Context, p Profile, o Options, log func(string)) error {
	c, err := slurm.New(slurmConfig(p, o))
	if err != nil {
		return err
	}
	bin, err := c.Ship()
	if err != nil {
		return err
	}
	log("binary shipped to " + bin)
	return nil
}

// probeSlurm runs sinfo, confirms the partition is up and runs one real
// trivial experiment as a job.
func probeSlurm(ctx context.Context, p Profile, o Options) (CheckReport, error) {
	rep := CheckReport{Worker: p.ID, CPUs: p.CPUs, MemoryMB: p.MemoryMB, MaxJobs: p.MaxJobs, Clock: time.Now().UTC(),
		Backend: sandbox.Report{Backend: p.ExecutionBackend}}
	m, err := openSlurm(p, o)
	if err != nil {
		return rep, err
	}
	part, err := m.(*slurmMachine).c.Partition(ctx)
	if err != nil {
		rep.Reason = err.Error()
		return rep, nil
	}
	rep.Protocol, rep.Host = "slurm", "partition "+part
	run, err := trivialRun(ctx, m)
	rep.Experiment = run
	if err != nil {
		rep.Reason = "trivial job: " + err.Error()
		return rep, nil
	}
	rep.Ready = run.Status == "succeeded"
	rep.Backend.Available = rep.Ready
	if !rep.Ready {
		rep.Reason = "trivial job " + run.Status
	}
	return rep, nil
}
