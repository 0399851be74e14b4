package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/simjecture/simjecture/store"
)

// This file is the review and handoff calls of the scientific modes
// (contract section 12). A review request is one row of the reviews
// table, written in one transaction with its event; the supervisor
// resolves it (engine/scireview.go) exactly once.

// ReviewStage is what a scientific review judges.
type ReviewStage string

// The review stages.
const (
	StageContract ReviewStage = "contract" // a contract review: the test design, before a decisive run
	StageSupport  ReviewStage = "support"  // the judge's support adjudication
)

// ScienceReviewArgs are the arguments of the scientific lab review.
type ScienceReviewArgs struct {
	Stage           string `json:"stage"`
	Claim           string `json:"claim"`
	ContractVersion *int   `json:"contract_version"`
	Case            string `json:"case"`
}

// ScienceReview queues a contract review or a support adjudication; the
// same request returns the same review.
func (l *Lab) ScienceReview(ctx context.Context, a ScienceReviewArgs) (Review, error) {
	stage := ReviewStage(a.Stage)
	if stage == StageSupport {
		if err := longEnough("case", a.Case); err != nil {
			return Review{}, err
		}
	} else if a.Case != "" || a.ContractVersion != nil {
		return Review{}, fmt.Errorf("a contract review takes only claim (it judges the latest version): %w", ErrLab)
	}
	var r Review
	err := l.write(ctx, func(tx *store.Tx) error {
		if err := l.requireLedger(tx, "review"); err != nil {
			return err
		}
		as, err := l.assigned(tx, a.Claim)
		if err != nil {
			return err
		}
		c, err := getClaim(tx, a.Claim)
		if err != nil {
			return err
		}
		if r, err = l.reviewRequest(tx, stage, c, a); err != nil {
			return err
		}
		if as != nil {
			r.Assignment = as.ID
		}
		return queueScienceReview(tx, &r)
	})
	return r, err
}

// reviewRequest checks a request against the ledger and builds it.
func (l *Lab) reviewRequest(tx *store.Tx, stage ReviewStage, c Claim, a ScienceReviewArgs) (Review, error) {
	if c.Status != string(LedgerOpen) {
		return Review{}, fmt.Errorf("%s is %s; only an open claim is reviewed: %w", c.ID, c.Status, ErrLab)
	}
	v, err := selectVersion(c, a.ContractVersion)
	if err != nil {
		return Review{}, err
	}
	if stage == StageSupport {
		if kindOf(c) != KindScientific {
			return Review{}, fmt.Errorf("support adjudication is for scientific claims; %s is %s: %w", c.ID, kindOf(c), ErrLab)
		}
		ver := v.Version
		if _, err := l.decisiveGate(tx, c, &ver, LedgerSupported); err != nil {
			return Review{}, err // no judge is started without a qualifying sufficient link
		}
	}
	r := Review{Claim: c.ID, Stage: stage, ContractVersion: v.Version, Case: a.Case, Status: "queued",
		Experiments: countingRuns(c, v.Version), CreatedAt: time.Now().UTC()}
	r.ID = shortHash("rev_", map[string]any{"stage": stage, "claim": c.ID, "version": v.Version, "case": a.Case})
	return r, nil
}

// countingRuns are the experiments linked as counting under a version.
func countingRuns(c Claim, version int) []string {
	out := []string{}
	for _, k := range c.Links {
		if k.ContractVersion == version && k.Counts && !slices.Contains(out, k.Experiment) {
			out = append(out, k.Experiment)
		}
	}
	return out
}

// queueScienceReview writes a new request, or returns the same one again;
// another request of the stage already queued for the claim is refused.
func queueScienceReview(tx *store.Tx, r *Review) error {
	if existing, err := getReview(tx, r.ID); err == nil {
		*r = existing
		return nil
	}
	queued, err := listDocs[Review](tx, store.Reviews, "queued")
	if err != nil {
		return err
	}
	for _, q := range queued {
		if q.Claim == r.Claim && q.Stage == r.Stage {
			return fmt.Errorf("review %s (%s of %s) is still queued: %w", q.ID, q.Stage, q.Claim, ErrLab)
		}
	}
	if err := putReview(tx, *r); err != nil {
		return err
	}
	return appendEvent(tx, ReviewRequestedPayload{Claim: r.Claim, ContractVersion: r.ContractVersion, Review: r.ID, Stage: r.Stage})
}

// HandoffArgs are the arguments of lab handoff.
type HandoffArgs struct {
	Outcome     string   `json:"outcome"`
	Experiments []string `json:"experiments"`
	NextTest    string   `json:"next_test"`
}

// handoffOutcomes are the outcomes a handoff may report; none is support.
var handoffOutcomes = []string{"falsified", "registered", "inconclusive", "blocked"}

// Handoff ends the active assignment with a validated, immutable handoff.
func (l *Lab) Handoff(ctx context.Context, a HandoffArgs) (Assignment, error) {
	if !slices.Contains(handoffOutcomes, a.Outcome) {
		return Assignment{}, fmt.Errorf("outcome %q: choose falsified, registered, inconclusive or blocked (support is the judge's alone): %w", a.Outcome, ErrLab)
	}
	var as Assignment
	err := l.write(ctx, func(tx *store.Tx) error {
		cur, err := activeAssignment(tx)
		if err != nil {
			return err
		}
		if cur == nil {
			return fmt.Errorf("no assignment is active to hand off: %w", ErrLab)
		}
		if err := checkHandoff(tx, *cur, a); err != nil {
			return err
		}
		as = endAssignment(*cur, Handoff{Outcome: a.Outcome, Experiments: a.Experiments, NextTest: a.NextTest})
		if err := putAssignment(tx, as); err != nil {
			return err
		}
		return appendEvent(tx, HandoffPayload{Assignment: as.ID, Outcome: a.Outcome})
	})
	return as, err
}

func endAssignment(a Assignment, h Handoff) Assignment {
	if h.Experiments == nil {
		h.Experiments = []string{}
	}
	h.CreatedAt = time.Now().UTC()
	a.Handoff, a.Status = &h, AssignmentEnded
	return a
}

// checkHandoff: falsified needs the falsifier's claim falsified through
// the gate, registered the repair scientist's child, and every experiment
// named must be linked to a claim of the assignment.
func checkHandoff(tx *store.Tx, as Assignment, a HandoffArgs) error {
	target, err := getClaim(tx, as.Claim)
	if err != nil {
		return err
	}
	switch {
	case a.Outcome == "falsified" && (as.Role != RoleFalsifier || target.Status != string(LedgerFalsified)):
		return fmt.Errorf("handoff falsified needs the falsifier's claim %s closed as falsified (it is %s): %w", as.Claim, target.Status, ErrLab)
	case a.Outcome == "registered" && (as.Role != RoleRepairScientist || len(as.Children) == 0):
		return fmt.Errorf("handoff registered needs the repair scientist's registered repair: %w", ErrLab)
	}
	for _, exp := range a.Experiments {
		if !linkedInScope(tx, as, exp) {
			return fmt.Errorf("experiment %s is not linked to a claim of assignment %s: %w", exp, as.ID, ErrLab)
		}
	}
	return nil
}

func linkedInScope(tx *store.Tx, as Assignment, exp string) bool {
	for _, id := range append([]string{as.Claim}, as.Children...) {
		c, err := getClaim(tx, id)
		if err == nil && slices.ContainsFunc(c.Links, func(k Link) bool { return k.Experiment == exp }) {
			return true
		}
	}
	return false
}

// assigned counts one operation of the active assignment and checks that
// claim is in its scope; with no assignment (the operator) it is nil.
func (l *Lab) assigned(tx *store.Tx, claim string) (*Assignment, error) {
	a, err := spend(tx)
	if err != nil || a == nil {
		return nil, err
	}
	if claim == "" {
		return a, nil
	}
	return a, a.inScope(tx, claim)
}
