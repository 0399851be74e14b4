package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"github.com/simjecture/simjecture/store"
)

// finalWrites is how often the executor tries to record a receipt's final
// state; finalGap is the wait before the second try, doubled after each.
const (
	finalWrites = 3
	finalGap    = 100 * time.Millisecond
)

// recordFinal writes a receipt's final state, retried with a short backoff;
// every failed try is a harness error, so a store that stays unwritable
// pauses the study instead of leaving it waiting for a receipt that stays
// running (the next supervisor marks that one interrupted). It reports
// whether the receipt is recorded.
func (e *executor) recordFinal(ctx context.Context, write func() error) bool {
	gap := finalGap
	for try := 1; ; try++ {
		err := write()
		if err == nil {
			return true
		}
		e.report(ctx, fmt.Sprintf("record the final receipt (try %d of %d)", try, finalWrites), err)
		if try == finalWrites {
			return false
		}
		time.Sleep(gap) // a short wait in the experiment's own goroutine, never the supervisor's loop
		gap *= 2
	}
}

// noSpace names the path and the free space when err is a full disk; it
// reports false for any other error.
func noSpace(err error) (error, bool) {
	if !errors.Is(err, syscall.ENOSPC) {
		return err, false
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return fmt.Errorf("no space left on the device: %w", err), true
	}
	dir := filepath.Dir(pe.Path)
	var st syscall.Statfs_t
	if serr := syscall.Statfs(dir, &st); serr != nil {
		return fmt.Errorf("no space left on the device of %s (free space unknown: %v): %w", pe.Path, serr, err), true
	}
	free := st.Bavail * uint64(st.Bsize)
	return fmt.Errorf("no space left on the device of %s (%d bytes free): %w", pe.Path, free, err), true
}

// spaceError records a run that failed for a full disk as a harness error
// of the executor; the receipt ends failed with the same message.
func (e *executor) spaceError(ctx context.Context, id string, err error) {
	msg := fmt.Sprintf("experiment %s: %v", id, err)
	e.failed("run "+id, err)
	werr := e.s.Tx(ctx, func(tx *store.Tx) error {
		return appendEvent(tx, HarnessErrorPayload{Where: "executor", Error: msg})
	})
	if werr != nil {
		e.log.Error("record executor error", "err", werr)
	}
}
