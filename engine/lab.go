package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/simjecture/simjecture/store"
)

// Lab serves the lab calls of one study.
type Lab struct {
	C     Campaign
	S     *store.Store
	Cores int   // CPU cores admission may hand out
	MemMB int64 // memory admission may hand out

	contract *Contract // loaded on first need
}

// Call validates raw against the call's schema and runs it.
func (l *Lab) Call(ctx context.Context, name string, raw []byte) (any, error) {
	spec, ok := FindCall(name)
	if !ok {
		return nil, fmt.Errorf("unknown lab call %q (known: %v): %w", name, CallNames(), ErrLab)
	}
	if err := spec.CheckArgs(raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	switch name {
	case "run":
		return decodeAndRun(raw, func(a RunArgs) (any, error) { return l.Run(ctx, a) })
	case "status":
		return decodeAndRun(raw, func(a StatusArgs) (any, error) { return l.Status(ctx, a) })
	case "cancel":
		return decodeAndRun(raw, func(a CancelArgs) (any, error) { return l.Cancel(ctx, a) })
	case "commit":
		return decodeAndRun(raw, func(a CommitArgs) (any, error) { return l.Commit(ctx, a) })
	case "review":
		return decodeAndRun(raw, func(a ReviewArgs) (any, error) { return l.Review(ctx, a) })
	case "review_status":
		return decodeAndRun(raw, func(a ReviewStatusArgs) (any, error) { return l.ReviewStatus(ctx, a) })
	default: // "note"
		return decodeAndRun(raw, func(a NoteArgs) (any, error) { return l.Note(ctx, a) })
	}
}

func decodeAndRun[T any](raw []byte, fn func(T) (any, error)) (any, error) {
	var args T
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("arguments: %v: %w", err, ErrLab)
	}
	return fn(args)
}

// StatusArgs are the arguments of lab status.
type StatusArgs struct {
	Experiment string `json:"experiment"`
}

// Status returns one receipt, or the whole snapshot.
func (l *Lab) Status(ctx context.Context, a StatusArgs) (any, error) {
	if a.Experiment == "" {
		return LoadSnapshot(ctx, l.C, l.S)
	}
	return l.receipt(ctx, a.Experiment)
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
	return putRecord(tx, store.Experiments, r.ID, r.Status, r)
}

// CancelArgs are the arguments of lab cancel.
type CancelArgs struct {
	Experiment string `json:"experiment"`
	Reason     string `json:"reason"`
}

// Cancel cancels a queued experiment at once and asks the executor to stop a running one.
func (l *Lab) Cancel(ctx context.Context, a CancelArgs) (any, error) {
	var r Receipt
	err := l.S.Tx(ctx, func(tx *store.Tx) error {
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
		_, err = tx.Append("experiment_cancel_requested", map[string]string{"experiment": r.ID, "reason": reason})
		return err
	})
	return l.C.Place(r), err
}

// NoteArgs are the arguments of lab note.
type NoteArgs struct {
	Statement string `json:"statement"`
}

// Note records a note.
func (l *Lab) Note(ctx context.Context, a NoteArgs) (any, error) {
	if len(a.Statement) == 0 || len(a.Statement) > 16384 {
		return nil, fmt.Errorf("note statement must be 1 to 16384 characters: %w", ErrLab)
	}
	n := Note{Statement: a.Statement, CreatedAt: time.Now().UTC()}
	err := l.S.Tx(ctx, func(tx *store.Tx) error {
		b, _ := json.Marshal(n)
		id, err := tx.AddNote(b)
		if err != nil {
			return err
		}
		n.ID = id
		_, err = tx.Append("note_added", n)
		return err
	})
	return n, err
}

// ReviewStatusArgs are the arguments of lab review_status.
type ReviewStatusArgs struct {
	Review string `json:"review"`
}

// ReviewStatus returns a review request with its verdict once resolved.
func (l *Lab) ReviewStatus(ctx context.Context, a ReviewStatusArgs) (any, error) {
	var r Review
	err := l.S.Read(ctx, func(tx *store.Tx) error {
		var err error
		r, err = getReview(tx, a.Review)
		return err
	})
	return r, err
}
