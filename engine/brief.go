package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/simjecture/simjecture/store"
)

// Bounds of lab brief, and the brief each worker prompt carries.
const (
	DefaultBriefBytes = 16000
	MinBriefBytes     = 2048
	MaxBriefBytes     = 64000
	PromptBriefBytes  = 6000
	briefSection      = 12 // entries a section starts with at most
)

// BriefArgs are the arguments of lab brief.
type BriefArgs struct {
	MaxBytes int `json:"max_bytes"`
}

// Brief is the research state in a bounded number of bytes: a header, two
// anchors that are never evicted (the latest experiment and the latest
// verdict) and sections whose whole entries are evicted, in
// [briefEviction] order, until the JSON fits.
type Brief struct {
	StudyID           string            `json:"study_id"`
	Status            Status            `json:"status"`
	RemainingSeconds  int64             `json:"remaining_seconds"`
	Root              BriefClaim        `json:"root"`
	Counts            BriefCounts       `json:"counts"`
	Retrieval         []string          `json:"retrieval"`
	LatestExperiment  *BriefExperiment  `json:"latest_experiment"`
	LatestVerdict     *BriefReview      `json:"latest_verdict"`
	ActiveExperiments []BriefExperiment `json:"active_experiments"` // queued and running, newest first
	OpenReviews       []BriefReview     `json:"open_reviews"`
	Claims            []BriefClaim      `json:"claims"` // other than root, newest first
	RecentVerdicts    []BriefReview     `json:"recent_verdicts"`
	RecentExperiments []BriefExperiment `json:"recent_experiments"` // finished, newest first
	Notes             []BriefNote       `json:"notes"`              // current ones: next_test, question, then the rest
	Omitted           map[string]int    `json:"omitted"`            // entries evicted, by section
}

// BriefCounts are the study's totals.
type BriefCounts struct {
	Experiments map[ExpStatus]int `json:"experiments"`
	Reviews     map[string]int    `json:"reviews"`
	Notes       int               `json:"notes"`
}

var briefRetrieval = []string{
	`lab status {"experiment": ID}: one receipt with its log tails and artifact_dir`,
	`lab status {"status", "limit", "offset"}: pages of receipts, newest first`,
	`lab notes {"kind", "limit", "offset"}: every note, superseded ones too`,
	`lab review_status {"review": ID}: a review with its whole verdict`,
}

// Brief returns the research state within max_bytes (default 16000).
func (l *Lab) Brief(ctx context.Context, a BriefArgs) (Brief, error) {
	if a.MaxBytes == 0 {
		a.MaxBytes = DefaultBriefBytes
	}
	if a.MaxBytes < MinBriefBytes || a.MaxBytes > MaxBriefBytes {
		return Brief{}, fmt.Errorf("max_bytes must be %d to %d, not %d: %w", MinBriefBytes, MaxBriefBytes, a.MaxBytes, ErrLab)
	}
	var b Brief
	err := l.S.Read(ctx, func(tx *store.Tx) error {
		var err error
		b, err = readBriefState(tx, a.MaxBytes)
		return err
	})
	if err != nil {
		return Brief{}, fmt.Errorf("read study: %w", err)
	}
	if b.Status == StatusRunning && !Owned(l.C) {
		b.Status = StatusInterrupted
	}
	if _, err := fitBrief(&b, a.MaxBytes); err != nil {
		return Brief{}, err
	}
	return b, nil
}

// briefJSON is the brief as a worker prompt carries it.
func briefJSON(tx *store.Tx, maxBytes int) ([]byte, error) {
	b, err := readBriefState(tx, maxBytes)
	if err != nil {
		return nil, err
	}
	return fitBrief(&b, maxBytes)
}

// briefPart is one evictable section: its name, length, and the entries
// it keeps in the first pass of eviction.
type briefPart struct {
	name  string
	floor int
	len   func() int
	drop  func() // removes the last (least important) entry
}

// briefEviction lists the sections in eviction order: while the brief is
// too large, the last entry of the first section above its floor goes.
// Notes may empty; every other section keeps one entry until nothing else
// can go, then empties in the same order. The anchors never go.
func briefEviction(b *Brief) []briefPart {
	return []briefPart{
		{"notes", 0, func() int { return len(b.Notes) }, func() { b.Notes = b.Notes[:len(b.Notes)-1] }},
		{"recent_experiments", 1, func() int { return len(b.RecentExperiments) }, func() { b.RecentExperiments = b.RecentExperiments[:len(b.RecentExperiments)-1] }},
		{"recent_verdicts", 1, func() int { return len(b.RecentVerdicts) }, func() { b.RecentVerdicts = b.RecentVerdicts[:len(b.RecentVerdicts)-1] }},
		{"claims", 1, func() int { return len(b.Claims) }, func() { b.Claims = b.Claims[:len(b.Claims)-1] }},
		{"open_reviews", 1, func() int { return len(b.OpenReviews) }, func() { b.OpenReviews = b.OpenReviews[:len(b.OpenReviews)-1] }},
		{"active_experiments", 1, func() int { return len(b.ActiveExperiments) }, func() { b.ActiveExperiments = b.ActiveExperiments[:len(b.ActiveExperiments)-1] }},
	}
}

// fitBrief evicts whole entries until the JSON fits and returns it; JSON is
// never cut. It fails only when the header and anchors alone are too large.
func fitBrief(b *Brief, maxBytes int) ([]byte, error) {
	if b.Omitted == nil {
		b.Omitted = map[string]int{}
	}
	parts := briefEviction(b)
	for {
		out, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("encode brief: %w", err)
		}
		if len(out) <= maxBytes {
			return out, nil
		}
		p, ok := nextEviction(parts)
		if !ok {
			return nil, fmt.Errorf("brief header and anchors take %d bytes, more than max_bytes %d: %w", len(out), maxBytes, ErrLab)
		}
		p.drop()
		b.Omitted[p.name]++
	}
}

// nextEviction picks the section to lose an entry: the first above its
// floor, else the first not empty.
func nextEviction(parts []briefPart) (briefPart, bool) {
	for _, p := range parts {
		if p.len() > p.floor {
			return p, true
		}
	}
	for _, p := range parts {
		if p.len() > 0 {
			return p, true
		}
	}
	return briefPart{}, false
}
