package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// MaxReviewAttempts is how often a malformed review is tried before it stays
// queued; crashed attempts (MaxReviewCrashes) do not count towards it.
const MaxReviewAttempts = 2

// Packet is what the independent reviewer receives (contract section 11).
type Packet struct {
	ClaimID      string         `json:"claim_id"`
	Statement    string         `json:"statement"`
	Acceptance   string         `json:"acceptance"`
	Disposition  string         `json:"disposition"`
	Conclusion   string         `json:"conclusion"`
	Challenge    *Challenge     `json:"challenge"`
	Hypothesis   string         `json:"hypothesis"`
	Instructions string         `json:"instructions"`
	Parent       []ParentClaim  `json:"parent"`
	Experiments  []Receipt      `json:"experiments"`
	Excluded     []ExcludedExp  `json:"excluded_experiments"`
	Steering     []Steering     `json:"steering"` // operator guidance, advisory (SteeringAuthority)
	Verdict      map[string]any `json:"verdict_schema"`
}

// ParentClaim is one ancestor of a repair claim, nearest first.
type ParentClaim struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	Status    string `json:"status"`
}

// ExcludedExp is a submitted experiment that does not qualify as evidence.
type ExcludedExp struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// processReviews resolves queued reviews, shallowest claims first, each in a
// fresh reviewer context.
func (sv *Supervisor) processReviews(ctx context.Context) Status {
	queue, claims, err := sv.reviewQueue(ctx)
	if err != nil {
		return sv.harnessError(ctx, storeError("read the review queue", err))
	}
	for _, r := range queue {
		if r.Stage == "" && blocked(claims[r.Claim], claims) || r.Attempts-r.Crashes >= MaxReviewAttempts || !sv.reviews.due(r.ID) {
			continue
		}
		if stop := sv.reviewOne(ctx, r, claims); stop != goOn {
			return stop
		}
		if b := sv.boundary(ctx); b != goOn {
			return b
		}
	}
	return goOn
}

func (sv *Supervisor) reviewQueue(ctx context.Context) ([]Review, map[string]Claim, error) {
	var queue []Review
	claims := map[string]Claim{}
	err := sv.s.Read(ctx, func(tx *store.Tx) error {
		var err error
		if queue, err = listDocs[Review](tx, store.Reviews, "queued"); err != nil {
			return err
		}
		all, err := listDocs[Claim](tx, store.Claims)
		for _, c := range all {
			claims[c.ID] = c
		}
		return err
	})
	sort.SliceStable(queue, func(i, j int) bool {
		return depth(claims[queue[i].Claim], claims) < depth(claims[queue[j].Claim], claims)
	})
	return queue, claims, err
}

func depth(c Claim, claims map[string]Claim) int {
	d := 0
	for c.Parent != nil && d < 1000 {
		c = claims[*c.Parent]
		d++
	}
	return d
}

// blocked: a repair is reviewed only once every ancestor's falsification is accepted.
func blocked(c Claim, claims map[string]Claim) bool {
	return c.ID != RootClaim && !ancestorsFalsified(c, claims)
}

func (sv *Supervisor) reviewOne(ctx context.Context, r Review, claims map[string]Claim) Status {
	if r.Stage != "" {
		return sv.scienceReviewOne(ctx, r)
	}
	packet, err := sv.buildPacket(ctx, r, claims)
	if err != nil {
		return sv.reviewFailed(ctx, r, err, nil)
	}
	body, _ := json.MarshalIndent(packet, "", "  ")
	sum := sha256.Sum256(body)
	dir, work, stop := sv.reviewFolder(ctx, r, body)
	if stop != goOn {
		return stop
	}
	sv.setActivity(ctx, "independent review of "+r.Claim)
	turn := provider.Turn{Role: provider.RoleReviewer, Number: r.Attempts + 1, Prompt: string(body), Dir: work,
		LogDir: dir, Env: sv.agentEnv(false), Timeout: sv.turnAllowance(), Model: sv.k.JudgeModel}
	out, logs, stop := sv.reviewTurn(ctx, r, turn, dir)
	if stop != goOn || out == nil {
		return stop
	}
	v, err := ParseVerdict(out.LastLine, r, claims[r.Claim])
	if err != nil {
		return sv.reviewFailed(ctx, r, err, logs)
	}
	return sv.resolve(ctx, r, v, hex.EncodeToString(sum[:]), logs)
}

// reviewFailed counts a malformed attempt, with the hashes of its folder
// when its reviewer ran; after the last one the request stays queued and
// counts as a harness error.
func (sv *Supervisor) reviewFailed(ctx context.Context, r Review, cause error, logs TurnLogs) Status {
	attempts := r.Attempts + 1 // counted in memory first, so a failed write cannot hide it
	err := sv.s.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		cur, err := getReview(tx, r.ID)
		if err != nil {
			return err
		}
		cur.Attempts = max(cur.Attempts+1, attempts)
		cur.LastError = cause.Error()
		attempts = cur.Attempts
		if err := putReview(tx, cur); err != nil {
			return err
		}
		return appendEvent(tx, ReviewFailedPayload{Review: r.ID, Attempt: cur.Attempts, Error: cause.Error(), Logs: logs})
	})
	sv.Bus.Notify()
	if err != nil {
		return sv.harnessError(ctx, storeError("record a failed review attempt", fmt.Errorf("review %s: %w", r.ID, err)))
	}
	if attempts-r.Crashes >= MaxReviewAttempts {
		return sv.harnessError(ctx, fmt.Errorf("review %s failed twice; request remains queued: %w", r.ID, cause))
	}
	return goOn
}

func (sv *Supervisor) resolve(ctx context.Context, r Review, v Verdict, packetSHA string, logs TurnLogs) Status {
	err := sv.s.Tx(ctx, func(tx *store.Tx) error {
		now := time.Now().UTC()
		r.Status, r.Verdict, r.PacketSHA256, r.ResolvedAt, r.Attempts = "resolved", &v, packetSHA, &now, r.Attempts+1
		if err := putReview(tx, r); err != nil {
			return err
		}
		if err := appendEvent(tx, ReviewResolvedPayload{Review: r.ID, Claim: r.Claim,
			Decision: v.Decision, Disposition: v.Disposition, Rationale: v.Rationale, NextTest: v.NextTest, Logs: logs}); err != nil {
			return err
		}
		if v.Decision != "approved" {
			return nil
		}
		c, err := getClaim(tx, r.Claim)
		if err != nil {
			return err
		}
		c.Status = v.Disposition
		if err := putClaim(tx, c); err != nil {
			return err
		}
		return appendEvent(tx, ClaimStatusPayload{Claim: c.ID, Status: c.Status})
	})
	sv.Bus.Notify()
	if err != nil {
		return sv.harnessError(ctx, storeError("record a review's verdict", err))
	}
	return goOn
}
