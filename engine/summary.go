package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/simjecture/simjecture/store"
)

// Summary is a study's state without its receipt, review and note lists:
// cheap to read however many experiments the study has.
type Summary struct {
	Snapshot                      // Experiments, Reviews and Notes are empty
	Experiments map[ExpStatus]int `json:"experiment_counts"` // by status
	Reviews     map[string]int    `json:"review_counts"`     // by status
	// LastEventAt is the time of the study's newest event: for a study no
	// supervisor runs, when it stopped.
	LastEventAt time.Time `json:"last_event_at"`
}

// Summary reads the study's summary in one consistent read.
func (v *View) Summary(ctx context.Context) (Summary, error) {
	var sum Summary
	err := v.s.Read(ctx, func(tx *store.Tx) error {
		row, err := tx.GetStudy()
		if err != nil {
			return err
		}
		var k Contract
		if err := decodeJSON(row.ContractJSON, &k); err != nil {
			return err
		}
		st, err := getState(tx)
		if err != nil {
			return err
		}
		fillFromContract(&sum.Snapshot, k)
		fillFromState(&sum.Snapshot, st)
		s := &sum.Snapshot
		if s.Usage.InputTokens, s.Usage.OutputTokens, err = tx.SumUsage(); err != nil {
			return err
		}
		if sum.Experiments, err = experimentCounts(tx); err != nil {
			return err
		}
		if sum.Reviews, err = tx.CountByStatus(store.Reviews); err != nil {
			return err
		}
		if s.Claims, err = listDocs[Claim](tx, store.Claims); err != nil {
			return err
		}
		sum.LastEventAt, err = headTime(tx)
		return err
	})
	if err != nil {
		return sum, fmt.Errorf("read study: %w", err)
	}
	sum.Campaign = v.c.Dir
	if sum.Status == StatusRunning && !Owned(v.c) {
		sum.Status = StatusInterrupted
	}
	return sum, nil
}

// headTime is the time of the newest event (zero when there is none).
func headTime(tx *store.Tx) (time.Time, error) {
	ev, err := tx.Head()
	if err != nil || ev.Seq == 0 {
		return time.Time{}, err
	}
	at, err := time.Parse(time.RFC3339Nano, ev.Time)
	if err != nil {
		return time.Time{}, fmt.Errorf("newest event %d: time %q: %w", ev.Seq, ev.Time, err)
	}
	return at, nil
}
