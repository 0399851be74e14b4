package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/simjecture/simjecture/engine"
)

// Detached is a supervisor that Options.Detach started in its own session:
// it outlives this process and its terminal.
type Detached struct {
	PID int
	// Exited receives once, when the process exits, why it did.
	Exited <-chan error
	// Stop asks the process to stop (SIGTERM); a no-op once it has exited.
	Stop func()
}

// handOverTimeout bounds the wait for the detached supervisor to take the
// study (it opens the store, probes the backend and takes the lock).
const handOverTimeout = 15 * time.Second

// errNoHandOver says this process has no study to hand over.
var errNoHandOver = errors.New("this process does not supervise the study")

// handOver leaves the study running without this process: it pauses the
// in-process supervisor (Run returns and releases the lock), starts the
// detached one and waits until it owns the study. The pause interrupts the
// experiments in flight, as any pause does. When the hand-over fails the
// study stays paused, supervised by nobody, and the error says why.
func (s *liveStudy) handOver(ctx context.Context) error {
	s.mu.Lock()
	sup, running := s.sup, s.running
	s.mu.Unlock()
	switch {
	case s.detach == nil:
		return errors.New("this view cannot start a background supervisor")
	case !running:
		return errNoHandOver
	}
	if _, err := engine.Control(ctx, s.c, sup, engine.Pause); err != nil {
		return fmt.Errorf("pause before the hand-over: %w", err)
	}
	d, err := s.detach(s.c.Dir)
	if err != nil {
		return fmt.Errorf("start the background supervisor: %w", err)
	}
	if err := s.waitTaken(ctx, d, handOverTimeout); err != nil {
		d.Stop()
		return err
	}
	return nil
}

// waitTaken waits until the detached supervisor d owns the study: the lock
// is held and the store records d's pid. It fails when d exits first or
// the timeout passes.
func (s *liveStudy) waitTaken(ctx context.Context, d Detached, timeout time.Duration) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if pid, err := s.view.SupervisorPID(ctx); err == nil && pid == d.PID {
			return nil
		}
		select {
		case err := <-d.Exited:
			return fmt.Errorf("the background supervisor exited: %w", err)
		case <-deadline.C:
			return fmt.Errorf("the background supervisor (pid %d) did not take the study within %v", d.PID, timeout)
		case <-ctx.Done():
			return fmt.Errorf("wait for the background supervisor: %w", ctx.Err())
		case <-tick.C:
		}
	}
}
