package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simjecture/simjecture/store"
)

// Claim statuses besides the review dispositions.
const ClaimOpen = "open"

// RootClaim is the id of the operator's hypothesis.
const RootClaim = "root"

// CommitArgs are the arguments of lab commit.
type CommitArgs struct {
	Statement  string     `json:"statement"`
	Parent     string     `json:"parent"`
	Acceptance string     `json:"acceptance"`
	Rationale  string     `json:"rationale"`
	Source     string     `json:"source"`
	Cases      [][]string `json:"cases"`
}

// Commit records a repair claim; the same commitment returns the same claim.
func (l *Lab) Commit(ctx context.Context, a CommitArgs) (Claim, error) {
	if strings.TrimSpace(a.Statement) == "" {
		return Claim{}, fmt.Errorf("commit needs a statement: %w", ErrLab)
	}
	if a.Parent == "" {
		a.Parent = RootClaim
	}
	if a.Source != "" {
		if _, _, err := resolveUnder(l.C.Research(), "source", a.Source); err != nil {
			return Claim{}, err
		}
	}
	parent := a.Parent
	c := Claim{Statement: a.Statement, Parent: &parent, Status: ClaimOpen, Acceptance: a.Acceptance,
		Rationale: a.Rationale, Source: a.Source, Cases: a.Cases, CreatedAt: time.Now().UTC()}
	c.ID = shortHash("claim_", map[string]any{"statement": a.Statement, "parent": a.Parent,
		"acceptance": a.Acceptance, "source": a.Source, "cases": a.Cases})
	err := l.write(ctx, func(tx *store.Tx) error {
		if existing, err := getClaim(tx, c.ID); err == nil {
			c = existing
			return nil
		}
		if _, err := getClaim(tx, a.Parent); err != nil {
			return err
		}
		if err := putClaim(tx, c); err != nil {
			return err
		}
		return appendEvent(tx, ClaimCommittedPayload{Claim: c.ID, Parent: a.Parent, Statement: c.Statement})
	})
	if err != nil {
		return Claim{}, err
	}
	return c, nil
}

func getClaim(tx *store.Tx, id string) (Claim, error) {
	var c Claim
	d, err := tx.GetDoc(store.Claims, id)
	if err != nil {
		return c, fmt.Errorf("no claim %s: %w", id, ErrLab)
	}
	return c, json.Unmarshal(d.JSON, &c)
}

func putClaim(tx *store.Tx, c Claim) error {
	_, err := putRecord(tx, store.Claims, c.ID, c.Status, c)
	return err
}

// ReviewArgs are the arguments of lab review.
type ReviewArgs struct {
	Claim       string     `json:"claim"`
	Disposition string     `json:"disposition"`
	Conclusion  string     `json:"conclusion"`
	Experiments []string   `json:"experiments"`
	Challenge   *Challenge `json:"challenge"`
}

// Review queues a request for the independent reviewer.
func (l *Lab) Review(ctx context.Context, a ReviewArgs) (Review, error) {
	if a.Claim == "" {
		a.Claim = RootClaim
	}
	if err := checkReviewArgs(a); err != nil {
		return Review{}, err
	}
	r := Review{Claim: a.Claim, Disposition: a.Disposition, Conclusion: a.Conclusion,
		Experiments: a.Experiments, Challenge: a.Challenge, Status: "queued", CreatedAt: time.Now().UTC()}
	r.ID = shortHash("rev_", map[string]any{"claim": a.Claim, "disposition": a.Disposition,
		"conclusion": a.Conclusion, "experiments": a.Experiments, "challenge": a.Challenge})
	err := l.write(ctx, func(tx *store.Tx) error {
		if existing, err := getReview(tx, r.ID); err == nil {
			r = existing
			return nil
		}
		if _, err := getClaim(tx, a.Claim); err != nil {
			return err
		}
		for _, id := range a.Experiments {
			if _, err := getReceipt(tx, id); err != nil {
				return err
			}
		}
		if err := putReview(tx, r); err != nil {
			return err
		}
		return appendEvent(tx, ReviewQueuedPayload{Review: r.ID, Claim: r.Claim, Disposition: r.Disposition})
	})
	if err != nil {
		return Review{}, err
	}
	return r, nil
}

func checkReviewArgs(a ReviewArgs) error {
	if len(a.Experiments) == 0 {
		return fmt.Errorf("review needs at least one experiment: %w", ErrLab)
	}
	if strings.TrimSpace(a.Conclusion) == "" {
		return fmt.Errorf("review needs a conclusion: %w", ErrLab)
	}
	if a.Disposition != "supported" {
		return nil
	}
	ch := a.Challenge
	if ch == nil || strings.TrimSpace(ch.Strategy) == "" || strings.TrimSpace(ch.Outcome) == "" || len(ch.Experiments) == 0 {
		return fmt.Errorf("a supported review needs challenge {strategy, experiments, outcome}: %w", ErrLab)
	}
	for _, id := range ch.Experiments {
		if !slices.Contains(a.Experiments, id) {
			return fmt.Errorf("challenge experiment %s is not among the review's experiments: %w", id, ErrLab)
		}
	}
	return nil
}

func getReview(tx *store.Tx, id string) (Review, error) {
	var r Review
	d, err := tx.GetDoc(store.Reviews, id)
	if err != nil {
		return r, fmt.Errorf("no review %s: %w", id, ErrLab)
	}
	return r, json.Unmarshal(d.JSON, &r)
}

func putReview(tx *store.Tx, r Review) error {
	_, err := putRecord(tx, store.Reviews, r.ID, r.Status, r)
	return err
}
