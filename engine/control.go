package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/simjecture/simjecture/store"
)

// RequestControl asks the study's supervisor to pause or cancel. With no
// live supervisor, the request takes effect at once in the store.
func RequestControl(ctx context.Context, c Campaign, command string) (string, error) {
	if command != "pause" && command != "cancel" {
		return "", fmt.Errorf("unknown control %q: %w", command, ErrInvalid)
	}
	if conn, err := dialLab(c); err == nil { // the supervisor records the request itself
		cl := &labClient{conn: conn, lines: newLineReader(conn)}
		defer conn.Close()
		return "requested", cl.control(ctx, command)
	}
	s, err := c.Open(ctx)
	if err != nil {
		return "", err
	}
	defer s.Close()
	if Owned(c) {
		return "requested", setControl(ctx, s, command)
	}
	return applyOffline(ctx, c, s, command)
}

// setControl records a pause or cancel request for the running supervisor.
func setControl(ctx context.Context, s *store.Store, command string) error {
	return s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.SetControl(command, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
			return err
		}
		_, err := tx.Append("control_requested", map[string]string{"command": command})
		return err
	})
}

// applyOffline changes the state of a study no supervisor runs.
func applyOffline(ctx context.Context, c Campaign, s *store.Store, command string) (string, error) {
	lock, err := AcquireLock(c)
	if err != nil {
		return "", err
	}
	defer lock.Release()
	var status string
	err = s.Tx(ctx, func(tx *store.Tx) error {
		st, err := getState(tx)
		if err != nil {
			return err
		}
		status = st.Status
		switch {
		case terminal(st.Status):
			return nil
		case command == "pause":
			if st.Status != StatusPausedExternalError {
				st.Status = StatusPaused
			}
		default:
			st.Status = StatusCancelled
			if err := cancelQueued(tx, "the study was cancelled"); err != nil {
				return err
			}
		}
		status, st.Activity = st.Status, "stopped: "+st.Status
		if err := putState(tx, st); err != nil {
			return err
		}
		_, err = tx.Append("study_state", map[string]string{"status": st.Status, "activity": "applied without a supervisor"})
		return err
	})
	if err != nil {
		return "", err
	}
	return status, WriteReports(ctx, c, s)
}

func terminal(status string) bool {
	return status == StatusCompleted || status == StatusCancelled || status == StatusBudgetExhausted
}

// Terminal reports whether a study in this status can no longer resume.
func Terminal(status string) bool { return terminal(status) }
