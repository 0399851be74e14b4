package engine

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// Options tunes a supervisor; zero values take the defaults.
type Options struct {
	Boundary   time.Duration             // how often pause, cancel and the deadline are checked (250 ms)
	Poll       time.Duration             // how often the executor looks for work (100 ms)
	Run        RunFunc                   // runs one experiment (sandbox.Run)
	SelfExe    string                    // this binary, for the sandbox helper and the lab CLI
	Cores      int                       // CPU slots for admission (the machine's cores)
	MemMB      int64                     // memory for admission (the machine's memory)
	HarnessMax int                       // consecutive harness errors before pausing (3)
	HarnessGap time.Duration             // wait after a harness error before the loop goes on (3 s)
	Backoff    func(n int) time.Duration // wait after n consecutive provider failures (Backoff)
	IdlePause  func(n int) time.Duration // pause after the n-th idle turn in a row (IdlePause)
}

// Supervisor owns one running study.
type Supervisor struct {
	c        Campaign
	s        *store.Store
	k        Contract
	agent    provider.Agent
	lock     *Lock
	opt      Options
	exec     *executor
	sizes    []machineSize // the machines of the pool, for lab run's resources (slotSizes)
	progs    programPins   // the programs the study runs, checked before every launch (programs.go)
	settings settingPins   // the settings it reads outside every enclosure (settings.go)
	// pinRecordOnce compares both with the study's record once (pinrecord.go).
	pinRecordOnce sync.Once
	pinRecordErr  error
	Bus           *Bus
	log           *slog.Logger // DIR/supervisor/supervisor.log
	hz            harness      // consecutive harness errors, in memory

	hypothesis, instructions string

	reviews reviewWaits // per review, when its next attempt may start (reviewcrash.go)
	judging atomic.Bool // a tool-free judge runs: the lab socket answers no call

	sockLimits labLimits // the lab socket's bounds; unset ones are defaultLabLimits (labconn.go)

	enc      sandbox.Enclosure // probed once (enclose.go)
	encOnce  sync.Once
	enclosed bool // this run encloses its agents

	mu    sync.Mutex
	stop  Status        // set by Stop: an in-process pause or cancel
	done  chan struct{} // closed when the pending run returns (lifecycle.go)
	final Status        // the status the last run stopped with
}

// Open takes the campaign lock and loads the study for supervision.
func Open(ctx context.Context, c Campaign, agent provider.Agent, opt Options) (*Supervisor, error) {
	lock, err := AcquireLock(c)
	if err != nil {
		return nil, err
	}
	return openLocked(ctx, c, lock, agent, opt)
}

// openLocked loads the study for supervision with the campaign lock this
// process holds; the supervisor owns lock from here, and an error releases it.
func openLocked(ctx context.Context, c Campaign, lock *Lock, agent provider.Agent, opt Options) (*Supervisor, error) {
	opt = withDefaults(opt)
	s, err := c.Open(ctx)
	if err != nil {
		_ = lock.Release()
		return nil, err
	}
	k, err := LoadContract(ctx, s)
	if err == nil {
		err = VerifyContinuation(c, k)
	}
	if err != nil {
		_ = s.Close()
		_ = lock.Release()
		return nil, err
	}
	pool, err := openPool(k, opt.SelfExe, opt.Cores, opt.MemMB)
	if err != nil {
		_ = s.Close()
		_ = lock.Release()
		return nil, err
	}
	sup := &Supervisor{c: c, s: s, k: k, agent: agent, lock: lock, opt: opt, Bus: NewBus(), log: newSupervisorLog(c),
		done: make(chan struct{})}
	progs := append([]string{k.Executable, opt.SelfExe}, sandbox.LauncherPrograms()...)
	profiles, _ := loadPool(k) // a pool that cannot be loaded failed openPool above
	for _, p := range profiles {
		progs = append(progs, p.Programs()...) // ssh, the Slurm clients
	}
	sup.progs.names = studyPrograms(progs...)
	sup.settings.pool = profiles
	sup.settings.k = k
	sup.settings.programs = func() []string { return append(sup.progs.paths(), sup.progs.found()...) }
	sup.sizes = slotSizes(pool)
	sup.hypothesis = readText(c.Operator() + "/hypothesis.txt")
	sup.instructions = readText(c.Operator() + "/instructions.txt")
	sup.exec = &executor{k: k, c: c, s: s, backend: k.ExecutionBackend, selfExe: opt.SelfExe, cores: opt.Cores,
		memMB: opt.MemMB, run: opt.Run, notify: sup.Bus.Notify, running: map[string]*runningExp{},
		log: sup.log, failed: sup.storeFailed, pool: pool}
	return sup, nil
}

// newLab is a Lab of the study for this supervisor's own calls: one
// experiment may ask for what one machine of the pool can hold.
func (sv *Supervisor) newLab() *Lab {
	cpus, mem := largest(sv.sizes)
	return &Lab{C: sv.c, S: sv.s, Cores: cpus, MemMB: mem, sizes: sv.sizes}
}

func withDefaults(o Options) Options {
	if o.Boundary == 0 {
		o.Boundary = 250 * time.Millisecond
	}
	if o.Poll == 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.Run == nil {
		o.Run = sandbox.Run
	}
	if o.Cores == 0 {
		o.Cores = 1
	}
	if o.HarnessMax == 0 {
		o.HarnessMax = 3
	}
	if o.HarnessGap == 0 {
		o.HarnessGap = 3 * time.Second
	}
	if o.Backoff == nil {
		o.Backoff = Backoff
	}
	if o.IdlePause == nil {
		o.IdlePause = IdlePause
	}
	return o
}

func readText(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// Store is the study's store, for readers in the same process.
func (sv *Supervisor) Store() *store.Store { return sv.s }

// Contract is the frozen contract.
func (sv *Supervisor) Contract() Contract { return sv.k }

// Stop asks the running loop to pause or cancel at its next boundary.
func (sv *Supervisor) Stop(status Status) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.stop == goOn {
		sv.stop = status
	}
}

// run supervises the study, holding the lock, until it stops (Run).
func (sv *Supervisor) run(ctx context.Context) (Status, error) {
	// Cap the study's processes where the pids cgroup is writable (root);
	// elsewhere the watchdog alone contains a fork bomb.
	_ = sandbox.LimitProcesses(sandbox.MaxProcesses)
	labLn := listenLab(sv.c)
	enc := sv.probeEnclosure(ctx) // also the agents' guard when they are not enclosed
	sv.enclosed = labLn != nil && enc.Available()
	if stop, err := sv.start(ctx, labLn); stop != goOn || err != nil {
		return stop, err
	}
	sv.log.Info("supervisor started", "pid", os.Getpid())
	// The lock is ours: no run of this study is in flight. Remove the run
	// folders a killed supervisor left; on the way out, wait for the
	// removal of those of the runs that finished.
	sandbox.ClearScratch(sv.c.Scratch())
	defer sandbox.Settle()
	if err := WriteReports(ctx, sv.c, sv.s); err != nil {
		return "", err
	}
	execCtx, stopExec := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if conn := listenWake(sv.c); conn != nil {
		wg.Go(func() { pumpWake(conn, sv.Bus.Notify) })
		defer conn.Close()
		context.AfterFunc(execCtx, func() { _ = conn.Close() })
	}
	if labLn != nil {
		wg.Go(func() { sv.serveLab(execCtx, labLn) })
	}
	wake, unsub := sv.Bus.Subscribe()
	defer unsub()
	wg.Go(func() { sv.exec.loop(execCtx, sv.opt.Poll, wake) })
	final := sv.loop(ctx)
	sv.exec.stopWith(experimentStopStatus(final))
	stopExec()
	wg.Wait()
	err := sv.finish(context.WithoutCancel(ctx), final)
	sv.log.Info("supervisor stopped", "status", final, "err", err)
	return final, err
}

// start checks the record and records that the study runs again; a
// record that fails the check stops the study (refuseToResume). On any
// stop or error it closes the lab listener.
func (sv *Supervisor) start(ctx context.Context, labLn *net.UnixListener) (Status, error) {
	stop, err := sv.checkedBegin(ctx)
	if (stop != goOn || err != nil) && labLn != nil {
		_ = labLn.Close()
	}
	return stop, err
}

func (sv *Supervisor) checkedBegin(ctx context.Context) (Status, error) {
	msg, err := sv.recordFinding(ctx)
	if err == nil && msg != "" {
		sv.log.Error("supervisor refused to resume", "finding", msg)
		return sv.refuseToResume(ctx, msg)
	}
	if err == nil {
		err = sv.begin(ctx)
	}
	if err != nil {
		sv.log.Error("supervisor could not start", "err", err)
		return "", storeError("record that the study runs", err)
	}
	return goOn, nil
}

func experimentStopStatus(final Status) ExpStatus {
	if final == StatusCancelled || final == StatusBudgetExhausted {
		return ExpCancelled
	}
	return ExpInterrupted
}

// begin marks experiments a dead supervisor left running on this host as
// interrupted (those on a worker are re-attached by the executor) and
// records that the study runs again.
func (sv *Supervisor) begin(ctx context.Context) error {
	return sv.update(ctx, func(tx *store.Tx, st *SupervisorState) error {
		if err := settleRunningWhere(tx, ExpInterrupted, reasonSupervisorStopped, onThisHost); err != nil {
			return err
		}
		if err := tx.ClearControl(); err != nil {
			return err
		}
		sv.hz.start(st.HarnessErrors)
		st.Status, st.Activity, st.PID = StatusRunning, "starting", os.Getpid()
		st.RecordProtection = sv.protection()
		st.Provider.NextRetryAt, st.Provider.ErrorCategory, st.Provider.Attention = nil, nil, nil
		return appendEvent(tx, StudyStatePayload{Status: StatusRunning, Activity: "supervisor started", ReportFormat: ReportFormat})
	})
}

// update runs fn on the supervisor state in one transaction and wakes subscribers.
func (sv *Supervisor) update(ctx context.Context, fn func(*store.Tx, *SupervisorState) error) error {
	err := sv.s.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		st, err := getState(tx)
		if err != nil {
			return err
		}
		if err := fn(tx, &st); err != nil {
			return err
		}
		return putState(tx, st)
	})
	sv.Bus.Notify()
	return err
}

// setActivity records what the supervisor is doing now.
func (sv *Supervisor) setActivity(ctx context.Context, activity string) {
	sv.record(ctx, "record the activity", func(tx *store.Tx, st *SupervisorState) error {
		if st.Activity == activity {
			return nil
		}
		st.Activity = activity
		return appendEvent(tx, ActivityPayload{Activity: activity})
	})
}

// finish records the final status and writes the reports.
func (sv *Supervisor) finish(ctx context.Context, final Status) error {
	err := sv.update(ctx, func(tx *store.Tx, st *SupervisorState) error {
		if final == StatusCancelled || final == StatusBudgetExhausted {
			if err := cancelQueued(tx, "the study was "+string(final)); err != nil {
				return err
			}
		}
		if err := tx.ClearControl(); err != nil {
			return err
		}
		st.Status, st.PID, st.Provider.NextRetryAt = final, 0, nil
		st.Activity = "stopped: " + string(final)
		if err := sv.harnessAttention(tx, st, final); err != nil {
			return err
		}
		return appendEvent(tx, StudyStatePayload{Status: final, Activity: st.Activity, ReportFormat: ReportFormat})
	})
	if err != nil {
		return sv.unrecorded(final, err)
	}
	if rerr := WriteReports(ctx, sv.c, sv.s); err == nil {
		err = rerr
	}
	return err
}

func cancelQueued(tx *store.Tx, reason string) error {
	queued, err := listDocs[Receipt](tx, store.Experiments, string(ExpQueued))
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	for _, r := range queued {
		r.Status, r.FinishedAt, r.Error = ExpCancelled, &now, reason
		if _, err := putReceipt(tx, r); err != nil {
			return err
		}
		if err := appendEvent(tx, ExperimentFinishedPayload{Experiment: r.ID, Status: r.Status, NeverRan: true}); err != nil {
			return err
		}
	}
	return nil
}

// boundary returns the status the study must stop with now, or goOn.
func (sv *Supervisor) boundary(ctx context.Context) Status {
	if ctx.Err() != nil {
		return stoppedBy(ctx)
	}
	sv.mu.Lock()
	stop := sv.stop
	sv.mu.Unlock()
	if stop != goOn {
		return stop
	}
	if sv.hz.isTripped() {
		return StatusPausedExternalError
	}
	var cmd string
	if err := sv.s.Read(ctx, func(tx *store.Tx) (err error) { cmd, err = tx.GetControl(); return err }); err != nil {
		if ctx.Err() != nil {
			return stoppedBy(ctx)
		}
		sv.storeFailed("read the control request", err)
		if sv.hz.isTripped() {
			return StatusPausedExternalError
		}
	}
	if status, ok := stopStatus[Command(cmd)]; ok {
		return status
	}
	if !time.Now().Before(sv.k.Deadline) {
		return StatusBudgetExhausted
	}
	return goOn
}

// ErrHangUp is the cause of a supervisor's context ended by a hang-up
// (SIGHUP: the terminal or the SSH session gone): the study pauses, to be
// resumed, where SIGTERM and Ctrl-C cancel it.
var ErrHangUp = errors.New("the terminal hung up")

// stoppedBy is the status a study stops with when its supervisor's context
// ended: paused after a hang-up, else cancelled.
func stoppedBy(ctx context.Context) Status {
	if errors.Is(context.Cause(ctx), ErrHangUp) {
		return StatusPaused
	}
	return StatusCancelled
}

// sleep waits d, checking the boundary; it returns the stop status if one came.
func (sv *Supervisor) sleep(ctx context.Context, d time.Duration) Status {
	end := time.Now().Add(d)
	for {
		if b := sv.boundary(ctx); b != goOn {
			return b
		}
		left := time.Until(end)
		if left <= 0 {
			return goOn
		}
		t := time.NewTimer(min(left, sv.opt.Boundary))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

func (sv *Supervisor) remaining() time.Duration { return time.Until(sv.k.Deadline) }
