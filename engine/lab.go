package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/simjecture/simjecture/store"
)

// Lab serves the lab calls of one study.
type Lab struct {
	C     Campaign
	S     *store.Store
	Cores int   // CPU cores admission may hand out
	MemMB int64 // memory admission may hand out
	// sizes, when set, are the machines of the study's pool: a request
	// must fit one of them whole (Cores and MemMB are then their largest).
	sizes []machineSize

	contract *Contract // loaded on first need
	role     Role      // set: calls are made in this role (tests); else read from the store

	// afterCheck, when set (tests), runs between a writing call's early
	// check and its handler: the instant in which its study may end.
	afterCheck func()

	remote    *labClient // set by OpenLab when the supervisor answers: calls go to it
	ownsStore bool       // OpenLab opened S
}

// Call validates raw against the call's schema and runs the call's handler.
func (l *Lab) Call(ctx context.Context, name string, raw []byte) (any, error) {
	if l.remote != nil {
		return l.remote.call(ctx, name, raw)
	}
	if _, ok := FindCall(name); !ok {
		return nil, fmt.Errorf("unknown lab call %q (known: %v): %w", name, CallNames(), ErrLab)
	}
	role, _, err := l.callRole(ctx)
	if err != nil {
		return nil, err
	}
	spec, ok := findCall(name, role)
	if !ok {
		return nil, fmt.Errorf("lab %s is not a call of the %s (its calls: %s): %w", name, role,
			strings.Join(CallNamesFor(role), ", "), ErrLab)
	}
	if spec.Writes {
		if err := l.requireWritable(ctx); err != nil {
			return nil, fmt.Errorf("lab %s: %w", name, err)
		}
		if l.afterCheck != nil {
			l.afterCheck()
		}
	}
	if err := spec.CheckArgs(raw); err != nil {
		return nil, err
	}
	if spec.handler.run == nil {
		return nil, fmt.Errorf("lab %s has no handler: %w", name, ErrLab)
	}
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	result, err := spec.handler.run(l, ctx, raw)
	var ended endedStudyError
	if errors.As(err, &ended) { // found inside the call's transaction: the same words as before it
		return nil, fmt.Errorf("lab %s: %w", name, ended)
	}
	return result, err
}

// requireWritable refuses a call that would change the record of a study
// that has ended or of a bundled record (contract section 2, demo
// --replay), before its arguments are read, so the refusal comes first
// and in one line: the record of an ended study is final, and its
// report.json the last word on it. The study may still end after this
// check; [Lab.write] checks again in the transaction that writes.
func (l *Lab) requireWritable(ctx context.Context) error {
	if err := l.S.Read(ctx, requireOpenStudy); err != nil {
		return err
	}
	if IsRecord(l.C) {
		return fmt.Errorf("this folder is the bundled record of a finished demo study; it takes no new work: %w", ErrLab)
	}
	return nil
}

// write runs fn in one write transaction of the study's store that first
// refuses a study that has ended (requireOpenStudy): the one way a lab
// call writes the record, so no write can follow the study's end, however
// close the two come (a call served by a supervisor whose study completes
// meanwhile). TestWritingCallsCheckTheEndInTheirTransaction holds every
// row marked Writes to it.
func (l *Lab) write(ctx context.Context, fn func(*store.Tx) error) error {
	return l.S.Tx(ctx, func(tx *store.Tx) error {
		if err := requireOpenStudy(tx); err != nil {
			return err
		}
		return fn(tx)
	})
}

func (l *Lab) receipt(ctx context.Context, id string) (Receipt, error) {
	var r Receipt
	err := l.S.Read(ctx, func(tx *store.Tx) error {
		var err error
		r, err = getReceipt(tx, id)
		return err
	})
	return l.C.Place(r), err
}

func getReceipt(tx *store.Tx, id string) (Receipt, error) {
	var r Receipt
	d, err := tx.GetDoc(store.Experiments, id)
	if err != nil {
		return r, fmt.Errorf("no experiment %s: %w", id, ErrLab)
	}
	return r, json.Unmarshal(d.JSON, &r)
}

func putReceipt(tx *store.Tx, r Receipt) (bool, error) {
	return putRecord(tx, store.Experiments, r.ID, string(r.Status), r)
}

// CancelArgs are the arguments of lab cancel.
type CancelArgs struct {
	Experiment string `json:"experiment"`
	Reason     string `json:"reason"`
}

// Cancel cancels a queued experiment at once and asks the executor to stop a running one.
func (l *Lab) Cancel(ctx context.Context, a CancelArgs) (Receipt, error) {
	var r Receipt
	err := l.write(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = getReceipt(tx, a.Experiment); err != nil {
			return err
		}
		reason := a.Reason
		if reason == "" {
			reason = "cancelled by the agent"
		}
		switch r.Status {
		case ExpQueued:
			now := time.Now().UTC()
			r.Status, r.FinishedAt, r.Error = ExpCancelled, &now, reason
		case ExpRunning:
			r.CancelRequested = reason
		default:
			return nil
		}
		if _, err := putReceipt(tx, r); err != nil {
			return err
		}
		return appendEvent(tx, ExperimentCancelRequestedPayload{Experiment: r.ID, Reason: reason})
	})
	return l.C.Place(r), err
}

// ReviewStatusArgs are the arguments of lab review_status.
type ReviewStatusArgs struct {
	Review string `json:"review"`
}

// ReviewStatus returns a review request with its verdict once resolved.
func (l *Lab) ReviewStatus(ctx context.Context, a ReviewStatusArgs) (Review, error) {
	var r Review
	err := l.S.Read(ctx, func(tx *store.Tx) error {
		var err error
		r, err = getReview(tx, a.Review)
		return err
	})
	return r, err
}
