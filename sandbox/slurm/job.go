package slurm

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// JobArg is the hidden mode of our binary that runs on a Slurm node:
// `simjecture __slurm-job JOB_FOLDER`.
const JobArg = "__slurm-job"

// JobMain runs the experiment of the job folder in args[0] on this node,
// writes its record and returns the exit code (0 once a record is written).
func JobMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: simjecture", JobArg, "JOB_FOLDER")
		return 2
	}
	f := jobFolder{dir: args[0], name: filepath.Base(args[0])}
	rec := runNode(f)
	if err := writeJSON(f.path(recordFile), rec); err != nil {
		fmt.Fprintln(os.Stderr, "slurm job:", err)
		return 1
	}
	return 0
}

// runNode runs the experiment and returns its record.
func runNode(f jobFolder) record {
	rec := record{Job: os.Getenv("SLURM_JOB_ID"), Node: os.Getenv("SLURMD_NODENAME")}
	var ns nodeSpec
	if err := readJSON(f.path(specFile), &ns); err != nil {
		rec.Error = fmt.Sprintf("slurm job: read its spec: %v", err)
		return rec
	}
	rec.Result.Backend = ns.Spec.Backend
	stop := newStopper()
	defer stop.release()
	if rep := sandbox.Probe(stop.ctx, ns.Spec.Backend); !rep.Available {
		rec.Error = fmt.Sprintf("execution backend %s is unavailable on node %s: %s", ns.Spec.Backend, rec.Node, rep.Reason)
		return rec
	}
	go stop.watchHeartbeat(ns.Heartbeat, ns.Grace)
	spec, err := nodeRunSpec(f, ns.Spec, rec.Job)
	if err == nil {
		rec.Result, err = sandbox.Run(stop.ctx, spec)
	}
	sandbox.CloseRunners()
	sandbox.Settle()
	rec.Stopped = stop.why()
	if err != nil {
		rec.Error = fmt.Sprintf("slurm job on node %s: %v", rec.Node, err)
	}
	return rec
}

// nodeRunSpec fills in the parts of spec that are this node's.
func nodeRunSpec(f jobFolder, spec sandbox.Spec, job string) (sandbox.Spec, error) {
	self, err := os.Executable()
	if err != nil {
		return spec, err
	}
	spec.SelfExe = self
	spec.ArtifactDir = f.path(outDir)
	// Live figures for the coordinator's process monitor (liveUsage): best
	// effort, the record is what counts.
	spec.Usage = func(u sandbox.Usage) { _ = writeJSON(f.path(usageFile), u) }
	spec.RunDir = filepath.Join(os.TempDir(), "simjecture-slurm-"+f.name+"-"+job)
	return spec, nil
}

// stopper cancels the run on SIGTERM/SIGINT (scancel, the time limit) or a
// stale heartbeat, remembering which came first.
type stopper struct {
	ctx    context.Context
	cancel context.CancelFunc
	sigs   chan os.Signal
	mu     sync.Mutex
	reason string
}

func newStopper() *stopper {
	ctx, cancel := context.WithCancel(context.Background())
	s := &stopper{ctx: ctx, cancel: cancel, sigs: make(chan os.Signal, 1)}
	signal.Notify(s.sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	go func() {
		select {
		case <-s.sigs:
			s.stop(stopSignal)
		case <-ctx.Done():
		}
	}()
	return s
}

func (s *stopper) stop(reason string) {
	s.mu.Lock()
	if s.reason == "" {
		s.reason = reason
	}
	s.mu.Unlock()
	s.cancel()
}

func (s *stopper) why() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

func (s *stopper) release() {
	signal.Stop(s.sigs)
	s.cancel()
}

// watchHeartbeat stops the run once path's modification time is older
// than grace (a missing file counts as stale from the start).
func (s *stopper) watchHeartbeat(path string, grace time.Duration) {
	every := min(max(grace/10, 50*time.Millisecond), time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	started := time.Now()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
		last := started
		if fi, err := os.Stat(path); err == nil {
			last = fi.ModTime()
		}
		if time.Since(last) > grace {
			s.stop(stopHeartbeat)
			return
		}
	}
}
