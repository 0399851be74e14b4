package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// recentVerdicts is how many resolved reviews the summary and the brief carry.
const recentVerdicts = 10

// StatusArgs are the arguments of lab status.
type StatusArgs struct {
	Experiment string    `json:"experiment"`
	Status     ExpStatus `json:"status"`
	Limit      int       `json:"limit"`
	Offset     int       `json:"offset"`
}

// StatusResult is the answer of lab status: one receipt, or, when no
// experiment was named, the bounded study summary. It encodes as the one it holds.
type StatusResult struct {
	Receipt *Receipt
	Summary *StatusSummary
}

// MarshalJSON encodes the receipt, or else the summary.
func (s StatusResult) MarshalJSON() ([]byte, error) {
	if s.Receipt != nil {
		return json.Marshal(s.Receipt)
	}
	return json.Marshal(s.Summary)
}

// StudyHeader is the part of the snapshot that does not grow with the study.
type StudyHeader struct {
	StudyID          string          `json:"study_id"`
	Status           Status          `json:"status"`
	Activity         string          `json:"activity"`
	Mode             string          `json:"mode"`
	AgentBackend     string          `json:"agent_backend"`
	Model            string          `json:"model"`
	JudgeModel       string          `json:"judge_model"`
	ExecutionBackend sandbox.Backend `json:"execution_backend"`
	CompletionPolicy string          `json:"completion_policy"`
	Campaign         string          `json:"campaign"`
	CreatedAt        time.Time       `json:"created_at"`
	Deadline         time.Time       `json:"deadline"`
	RemainingSeconds int64           `json:"remaining_seconds"`
	Turn             int             `json:"turn"`
	Provider         ProviderState   `json:"provider"`
	Usage            Usage           `json:"usage"`
	LastError        string          `json:"last_error,omitempty"`
	// UnreachableWorkers: while no machine of the pool can be reached, its workers.
	UnreachableWorkers []string `json:"unreachable_workers,omitempty"`
}

// ReceiptLine is a receipt without its log tails (lab status with the
// experiment's id gives them).
type ReceiptLine struct {
	Receipt
	StdoutTail string `json:"stdout_tail,omitempty"` // always empty: shadows the receipt's
	StderrTail string `json:"stderr_tail,omitempty"`
}

// Page says which receipts a summary holds.
type Page struct {
	Status ExpStatus `json:"status,omitempty"` // the filter, if any
	Total  int       `json:"total"`            // experiments matching it
	Offset int       `json:"offset"`
	Limit  int       `json:"limit"`
}

// StatusSummary is lab status without an experiment: the header, counts,
// every claim, the open reviews with the newest verdicts, and one page of
// receipts, newest first. Its size does not grow with the experiments.
type StatusSummary struct {
	StudyHeader
	ExperimentCounts map[ExpStatus]int `json:"experiment_counts"`
	Page             Page              `json:"page"`
	Experiments      []ReceiptLine     `json:"experiments"`
	Claims           []Claim           `json:"claims"`
	ReviewCounts     map[string]int    `json:"review_counts"`
	Reviews          []Review          `json:"reviews"` // open ones and the newest verdicts, oldest first
	NoteCount        int               `json:"note_count"`
	// Role and Assignment: structured and frontier, who calls now.
	Role       Role        `json:"role,omitempty"`
	Assignment *Assignment `json:"assignment,omitempty"`
}

// Status returns one receipt, or the bounded summary.
func (l *Lab) Status(ctx context.Context, a StatusArgs) (StatusResult, error) {
	if a.Experiment == "" {
		sum, err := l.summary(ctx, a)
		if err != nil {
			return StatusResult{}, err
		}
		return StatusResult{Summary: &sum}, nil
	}
	if a.Status != "" || a.Limit != 0 || a.Offset != 0 {
		return StatusResult{}, fmt.Errorf("status, limit and offset page the summary; they do not go with experiment: %w", ErrLab)
	}
	r, err := l.receipt(ctx, a.Experiment)
	return StatusResult{Receipt: &r}, err
}

func (l *Lab) summary(ctx context.Context, a StatusArgs) (StatusSummary, error) {
	if a.Status != "" && !slices.Contains(expStatuses, a.Status) {
		return StatusSummary{}, fmt.Errorf("unknown experiment status %q (known: %v): %w", a.Status, expStatuses, ErrLab)
	}
	limit, err := pageLimit(a.Limit, a.Offset)
	if err != nil {
		return StatusSummary{}, err
	}
	var sum StatusSummary
	err = l.S.Read(ctx, func(tx *store.Tx) error {
		var err error
		if sum, err = readSummary(tx, a.Status, limit, a.Offset); err != nil {
			return err
		}
		if ModeRole(sum.Mode) != RoleWorker {
			sum.Role, sum.Assignment, err = studyRole(tx, sum.Mode)
		}
		return err
	})
	if err != nil {
		return sum, fmt.Errorf("read study: %w", err)
	}
	sum.Campaign = l.C.Dir
	for i := range sum.Experiments {
		sum.Experiments[i].Receipt = l.C.Place(sum.Experiments[i].Receipt)
	}
	if sum.Status == StatusRunning && !Owned(l.C) {
		sum.Status = StatusInterrupted
	}
	return sum, nil
}

func readSummary(tx *store.Tx, filter ExpStatus, limit, offset int) (StatusSummary, error) {
	var sum StatusSummary
	snap, err := readHeader(tx)
	if err != nil {
		return sum, err
	}
	sum.StudyHeader, sum.ExperimentCounts = snap.StudyHeader, snap.ExperimentCounts
	sum.Page = Page{Status: filter, Total: pageTotal(snap.ExperimentCounts, filter), Offset: offset, Limit: limit}
	if sum.Experiments, err = pageReceipts(tx, filter, limit, offset); err != nil {
		return sum, err
	}
	if sum.Claims, err = listDocs[Claim](tx, store.Claims); err != nil {
		return sum, err
	}
	if sum.ReviewCounts, err = tx.CountByStatus(store.Reviews); err != nil {
		return sum, err
	}
	if sum.Reviews, err = boundedReviews(tx); err != nil {
		return sum, err
	}
	sum.NoteCount, err = tx.CountNotes()
	return sum, err
}

func pageTotal(counts map[ExpStatus]int, filter ExpStatus) int {
	if filter != "" {
		return counts[filter]
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// pageReceipts reads one page of receipts, newest first, without log tails.
func pageReceipts(tx *store.Tx, filter ExpStatus, limit, offset int) ([]ReceiptLine, error) {
	var statuses []string
	if filter != "" {
		statuses = []string{string(filter)}
	}
	docs, err := tx.PageDocs(store.Experiments, statuses, limit, offset)
	if err != nil {
		return nil, err
	}
	rs, err := decodeDocs[Receipt](store.Experiments, docs)
	if err != nil {
		return nil, err
	}
	out := make([]ReceiptLine, len(rs))
	for i, r := range rs {
		r.StdoutTail, r.StderrTail = "", ""
		out[i] = ReceiptLine{Receipt: r}
	}
	return out, nil
}

// boundedReviews returns the open reviews and the newest resolved ones,
// oldest first, as a claim's history reads.
func boundedReviews(tx *store.Tx) ([]Review, error) {
	open, err := tx.ListDocs(store.Reviews, "queued")
	if err != nil {
		return nil, err
	}
	done, err := tx.PageDocs(store.Reviews, []string{"resolved"}, recentVerdicts, 0)
	if err != nil {
		return nil, err
	}
	all := append(done, open...)
	slices.SortFunc(all, func(a, b store.Doc) int { return cmp.Compare(a.Seq, b.Seq) })
	return decodeDocs[Review](store.Reviews, all)
}

var expStatuses = []ExpStatus{ExpQueued, ExpRunning, ExpSucceeded, ExpFailed, ExpTimedOut, ExpCancelled, ExpInterrupted}

// ExpStatuses lists every experiment status, in the order an experiment
// goes through them.
func ExpStatuses() []ExpStatus { return slices.Clone(expStatuses) }
