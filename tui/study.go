package tui

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/simjecture/simjecture/engine"
)

// liveStudy is the production Study: it reads through an engine.View,
// samples processes with an engine.ProcMonitor, and, when this process
// supervises the study, runs engine.Supervisor.Run in a goroutine the
// runtime waits for.
type liveStudy struct {
	c      engine.Campaign
	view   *engine.View
	mon    *engine.ProcMonitor
	launch func(ctx context.Context, dir string) (*engine.Supervisor, error)
	detach func(dir string) (Detached, error) // Options.Detach; nil: no hand-over
	wg     *sync.WaitGroup
	runCtx context.Context // ending it cancels a supervised study (SIGTERM)

	readOnly bool // --read-only: no guidance is sent from here

	mu      sync.Mutex
	sup     *engine.Supervisor
	ownSup  bool // this study opened sup and closes it
	running bool
	done    chan struct{} // closed when the current Run returns
	final   engine.Status
	runErr  error
	backend string
	remote  []engine.Receipt // the running experiments on workers, from the last snapshot
}

// Dir is the campaign folder.
func (s *liveStudy) Dir() string { return s.c.Dir }

// start runs the supervisor until it stops.
func (s *liveStudy) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.sup == nil {
		return
	}
	s.running, s.done = true, make(chan struct{})
	sup, done := s.sup, s.done
	s.wg.Go(func() {
		final, err := sup.Run(s.runCtx)
		s.mu.Lock()
		s.running, s.final, s.runErr = false, final, err
		s.mu.Unlock()
		close(done)
	})
}

// Refresh reads the snapshot and the supervision state.
func (s *liveStudy) Refresh(ctx context.Context) (StudyState, error) {
	snap, err := s.view.DisplaySnapshot(ctx)
	if err != nil {
		return StudyState{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backend = string(snap.ExecutionBackend)
	s.remote = remoteRunning(snap.Experiments)
	st := StudyState{Snapshot: snap, Supervising: s.running, Final: s.final}
	if s.runErr != nil {
		st.RunErr = s.runErr.Error()
	}
	st.OtherOwner = !s.running && engine.Owned(s.c)
	return st, nil
}

// Processes samples the supervisor's process tree: this process when it
// supervises, else the supervisor recorded in the store, if it lives.
func (s *liveStudy) Processes(ctx context.Context) ([]engine.ProcSample, error) {
	s.mu.Lock()
	running, backend, remote, sup := s.running, s.backend, s.remote, s.sup
	s.mu.Unlock()
	root := os.Getpid()
	if !running {
		pid, err := s.view.SupervisorPID(ctx)
		if err != nil || pid == 0 {
			return nil, err
		}
		root = pid
	}
	rows, err := s.mon.Sample([]int{root}, backend)
	if err != nil {
		return nil, err
	}
	return append(rows, engine.RemoteSamples(remote, time.Now(), s.remoteUsage(ctx, running, sup, remote))...), nil
}

// remoteUsage is the live figures of the experiments on workers: this
// process's supervisor's, else the live supervisor's, asked through its
// lab socket (none when it does not answer: the rows then show none).
func (s *liveStudy) remoteUsage(ctx context.Context, running bool, sup *engine.Supervisor, remote []engine.Receipt) map[string]engine.RemoteUsage {
	switch {
	case len(remote) == 0:
		return nil
	case running && sup != nil:
		return sup.RemoteUsage()
	}
	u, err := engine.RemoteUsageOf(ctx, s.c)
	if err != nil {
		return nil
	}
	return u
}

// remoteRunning keeps the receipts running on a worker.
func remoteRunning(exps []engine.Receipt) []engine.Receipt {
	var out []engine.Receipt
	for _, r := range exps {
		if r.Status == engine.ExpRunning && r.Remote != nil {
			out = append(out, r)
		}
	}
	return out
}

// Control pauses, cancels or resumes the study. Pause and cancel go to
// the supervisor wherever it runs (engine.Control): in this process they
// return once it has stopped and released the study.
func (s *liveStudy) Control(ctx context.Context, command engine.Command) error {
	switch command {
	case resume:
		return s.resume(ctx)
	case background:
		return s.handOver(ctx)
	}
	s.mu.Lock()
	sup := s.sup
	if !s.running {
		sup = nil
	}
	s.mu.Unlock()
	_, err := engine.Control(ctx, s.c, sup, command)
	return err
}

// resume supervises the study in this process: again with the same
// supervisor, or with a new one when the study was attached.
func (s *liveStudy) resume(ctx context.Context) error {
	s.mu.Lock()
	sup, running := s.sup, s.running
	s.mu.Unlock()
	switch {
	case running:
		return nil
	case sup != nil:
		sup.Rearm()
	case s.launch == nil:
		return fmt.Errorf("this view cannot supervise studies")
	default:
		var err error
		if sup, err = s.launch(ctx, s.c.Dir); err != nil {
			return err
		}
		s.mu.Lock()
		s.sup, s.ownSup = sup, true
		s.mu.Unlock()
	}
	s.start()
	return nil
}

// stopAndWait pauses a study this process still supervises and waits for
// its supervisor: leaving the UI never leaves a study running unowned.
func (s *liveStudy) stopAndWait() {
	s.mu.Lock()
	sup, running, done := s.sup, s.running, s.done
	s.mu.Unlock()
	if running {
		sup.Stop(engine.StatusPaused)
		<-done
	}
}

// result is the final status of the last supervised run.
func (s *liveStudy) result() (engine.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.final, s.runErr
}

// close releases the view and a supervisor this study opened.
func (s *liveStudy) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ownSup && s.sup != nil {
		_ = s.sup.Close()
	}
	_ = s.view.Close()
}

// Steer queues operator guidance for the study (engine.Steer), refused in
// a read-only view.
func (s *liveStudy) Steer(ctx context.Context, text string) (engine.SteerResult, error) {
	if s.readOnly {
		return engine.SteerResult{}, fmt.Errorf("read-only: guidance cannot be sent from this view")
	}
	return engine.Steer(ctx, s.c, text, "")
}

// ContinuationDraft reads the study's contract and research/ for a
// continuation (engine.View.ContinuationDraft).
func (s *liveStudy) ContinuationDraft(ctx context.Context) (engine.ContinuationDraft, error) {
	return s.view.ContinuationDraft(ctx)
}
