package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/simjecture/simjecture/store"
)

// harness counts the supervisor's own failures in memory, so that a store
// that cannot be written still pauses the study: the count never depends
// on the write that records it.
type harness struct {
	mu      sync.Mutex
	n       int   // consecutive harness errors; reset when a worker turn is recorded
	tripped bool  // n reached the maximum during this run
	at      int   // n when it did
	last    error // the latest harness error, until then
}

// count adds one harness error and reports the new count and whether the
// maximum is reached.
func (h *harness) count(err error, limit int) (int, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	if !h.tripped { // the message names the error that reached the limit
		h.last = err
	}
	if h.n >= limit && !h.tripped {
		h.tripped, h.at = true, h.n
	}
	return h.n, h.tripped
}

// start carries the count recorded by an earlier run over into this one.
func (h *harness) start(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n = n
}

// reset starts a new streak after a recorded worker turn; once the maximum
// is reached the study pauses all the same.
func (h *harness) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.tripped {
		h.n, h.last = 0, nil
	}
}

// cause is the count at which the maximum was reached and the error that
// reached it; ok is false while the maximum is not reached.
func (h *harness) cause() (at int, ok bool, last error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.at, h.tripped, h.last
}

// attention is the operator's message once the maximum is reached, else "".
func (h *harness) attention(log string) string {
	at, ok, last := h.cause()
	if !ok {
		return ""
	}
	return fmt.Sprintf("%v; the study paused after %d consecutive harness errors. See %s, then resume this study.",
		last, at, log)
}

func (h *harness) isTripped() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tripped
}

// storeError names the store call that failed, for the log and the operator.
func storeError(op string, err error) error {
	if full, ok := noSpace(err); ok { // the store's path and the free space
		err = full
	}
	return fmt.Errorf("the study's store failed to %s: %w", op, err)
}

// storeFailed is the one path for a store call of the supervisor that
// failed: it is logged and counted as a harness error. Once the count
// reaches Options.HarnessMax the next boundary pauses the study.
func (sv *Supervisor) storeFailed(op string, err error) {
	sv.countHarness(storeError(op, err))
}

// countHarness logs a harness error and counts it in memory.
func (sv *Supervisor) countHarness(err error) (int, bool) {
	n, tripped := sv.hz.count(err, sv.opt.HarnessMax)
	sv.log.Error("harness error", "err", err, "consecutive", n, "max", sv.opt.HarnessMax)
	return n, tripped
}

// harnessError counts a failure of our own in memory, then records it; too
// many in a row pause the study, else the loop goes on after a short wait.
func (sv *Supervisor) harnessError(ctx context.Context, err error) Status {
	n, tripped := sv.countHarness(err)
	werr := sv.update(ctx, func(tx *store.Tx, st *SupervisorState) error {
		st.HarnessErrors = n
		st.LastError = err.Error()
		return appendEvent(tx, HarnessErrorPayload{Error: err.Error(), Consecutive: n})
	})
	if werr != nil {
		sv.log.Error("record harness error", "err", werr)
	}
	if tripped {
		return StatusPausedExternalError
	}
	return sv.sleep(ctx, min(sv.opt.HarnessGap, sv.remaining()))
}

// harnessAttention sets the operator's message in st when the study
// pauses for its harness errors and nothing else asked for attention first.
func (sv *Supervisor) harnessAttention(tx *store.Tx, st *SupervisorState, final Status) error {
	msg := sv.hz.attention(sv.c.SupervisorLog())
	if final != StatusPausedExternalError || msg == "" || st.Provider.Attention != nil {
		return nil
	}
	cat := "harness"
	st.Provider.ErrorCategory, st.Provider.Attention, st.LastError = &cat, &msg, msg
	return appendEvent(tx, ProviderNeedsAttentionPayload{Category: cat, Attention: msg})
}

// record runs fn like update; a failure goes to storeFailed and record
// reports false.
func (sv *Supervisor) record(ctx context.Context, op string, fn func(*store.Tx, *SupervisorState) error) bool {
	if err := sv.update(ctx, fn); err != nil {
		sv.storeFailed(op, err)
		return false
	}
	return true
}

// unrecorded is Run's error when the final status cannot be written: the
// process then exits 1 with this one line.
func (sv *Supervisor) unrecorded(final Status, err error) error {
	sv.log.Error("record the final status", "status", final, "err", err)
	if at, ok, last := sv.hz.cause(); ok && final == StatusPausedExternalError {
		return fmt.Errorf("%v; the study stopped after %d consecutive harness errors and could not record its pause "+
			"either (%w). See %s", last, at, err, sv.c.SupervisorLog())
	}
	return fmt.Errorf("the study stopped as %s, but %w (see %s)", final, storeError("record it", err), sv.c.SupervisorLog())
}
