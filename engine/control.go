package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/simjecture/simjecture/store"
)

// controlAnswerWait bounds RequestControl's wait for the supervisor's
// answer on its lab socket, so the request still acts within 1 s (the
// contract) when the socket accepts and never answers.
const controlAnswerWait = 400 * time.Millisecond

// RequestControl asks the study's supervisor to pause or cancel. With no
// live supervisor, the request takes effect at once in the store.
func RequestControl(ctx context.Context, c Campaign, command Command) (Status, error) {
	if _, ok := stopStatus[command]; !ok {
		return "", fmt.Errorf("unknown control %q: %w", command, ErrInvalid)
	}
	if conn, err := dialLab(c); err == nil { // the supervisor records the request itself
		err := controlOverSocket(ctx, c, conn, command)
		if err == nil {
			return Requested, nil
		}
		if !errors.Is(err, errNoAnswer) {
			return "", err
		}
		// It closed without an answer (stopping, or dead), refused the
		// connection (busy) or did not answer in time: record the request
		// as when no supervisor answers. Asking twice is harmless.
	}
	s, err := c.Open(ctx)
	if err != nil {
		return "", err
	}
	defer s.Close()
	if err := s.Read(ctx, func(tx *store.Tx) error { return refuseEnded(tx, c) }); err != nil {
		return "", err
	}
	if Owned(c) {
		if err := setControl(ctx, c, s, command, ""); err != nil {
			return "", err
		}
		return Requested, nil
	}
	return applyOffline(ctx, c, s, command)
}

// controlOverSocket sends command to the supervisor on conn, waiting at
// most controlAnswerWait for its answer, and closes conn.
func controlOverSocket(ctx context.Context, c Campaign, conn *net.UnixConn, command Command) error {
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, controlAnswerWait)
	defer cancel()
	return newLabClient(c, conn).control(ctx, c, string(command))
}

// setControl records a pause or cancel request for the running supervisor.
// A study that has ended meanwhile (its supervisor has not exited yet) is
// refused in the same transaction, with an [EndedError], and nothing is
// written: no request may follow the study's end in its log.
func setControl(ctx context.Context, c Campaign, s *store.Store, command Command, by string) error {
	return s.Tx(ctx, func(tx *store.Tx) error {
		if err := refuseEnded(tx, c); err != nil {
			return err
		}
		if err := tx.SetControl(string(command), time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
			return err
		}
		return appendEvent(tx, ControlRequestedPayload{Command: command, By: by})
	})
}

// applyOffline changes the state of a study no supervisor runs.
func applyOffline(ctx context.Context, c Campaign, s *store.Store, command Command) (Status, error) {
	lock, err := AcquireLock(c)
	if err != nil {
		return "", err
	}
	defer lock.Release()
	if err := killOrphanRuns(c); err != nil {
		return "", err
	}
	var status Status
	err = s.Tx(ctx, func(tx *store.Tx) error {
		st, err := getState(tx)
		if err != nil {
			return err
		}
		if terminal(st.Status) {
			return &EndedError{Dir: c.Dir, Status: st.Status}
		}
		switch {
		case command == Pause:
			if st.Status != StatusPausedExternalError {
				st.Status = StatusPaused
			}
			if err := settleRunning(tx, ExpInterrupted, reasonSupervisorStopped); err != nil {
				return err
			}
		default:
			st.Status = StatusCancelled
			if err := settleRunning(tx, ExpCancelled, "the study was cancelled; "+reasonSupervisorStopped); err != nil {
				return err
			}
			if err := cancelQueued(tx, "the study was cancelled"); err != nil {
				return err
			}
		}
		status, st.Activity = st.Status, "stopped: "+string(st.Status)
		if err := putState(tx, st); err != nil {
			return err
		}
		return appendEvent(tx, StudyStatePayload{Status: st.Status, Activity: "applied without a supervisor", ReportFormat: ReportFormat})
	})
	if err != nil {
		return "", err
	}
	return status, WriteReports(ctx, c, s)
}

// refuseEnded returns an [EndedError] for a study that has ended.
func refuseEnded(tx *store.Tx, c Campaign) error {
	st, err := getState(tx)
	if err != nil {
		return err
	}
	if terminal(st.Status) {
		return &EndedError{Dir: c.Dir, Status: st.Status}
	}
	return nil
}

func terminal(status Status) bool {
	return status == StatusCompleted || status == StatusCancelled || status == StatusBudgetExhausted
}

// Terminal reports whether a study in this status can no longer resume.
func Terminal(status Status) bool { return terminal(status) }
