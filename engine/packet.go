package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simjecture/simjecture/store"
)

// buildPacket assembles the reviewer's packet, re-checking every artifact hash.
func (sv *Supervisor) buildPacket(ctx context.Context, r Review, claims map[string]Claim) (Packet, error) {
	c := claims[r.Claim]
	p := Packet{ClaimID: r.Claim, Statement: c.Statement, Acceptance: c.Acceptance, Disposition: r.Disposition,
		Conclusion: r.Conclusion, Challenge: r.Challenge, Hypothesis: sv.hypothesis, Instructions: sv.instructions,
		Parent: []ParentClaim{}, Excluded: []ExcludedExp{}, Experiments: []Receipt{}, Verdict: verdictSchema()}
	for a := c; a.Parent != nil; {
		parent, ok := claims[*a.Parent]
		if !ok || len(p.Parent) > 100 {
			break
		}
		p.Parent = append(p.Parent, ParentClaim{ID: parent.ID, Statement: parent.Statement, Status: parent.Status})
		a = parent
	}
	err := sv.s.Read(ctx, func(tx *store.Tx) error {
		var err error
		if p.Steering, err = listSteering(tx); err != nil {
			return err
		}
		for _, id := range r.Experiments {
			rec, err := getReceipt(tx, id)
			if err != nil {
				return err
			}
			if reason := disqualified(rec); reason != "" {
				p.Excluded = append(p.Excluded, ExcludedExp{ID: id, Reason: reason})
				continue
			}
			p.Experiments = append(p.Experiments, sv.c.Place(rec))
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	for _, rec := range p.Experiments {
		if err := checkArtifacts(rec); err != nil {
			return p, err
		}
	}
	return p, nil
}

func disqualified(r Receipt) string {
	switch {
	case r.Status != ExpSucceeded:
		return "status " + string(r.Status) + ": only succeeded experiments are evidence"
	case r.Stage != "evidence":
		return "stage " + r.Stage + ": only evidence-stage experiments are evidence"
	}
	return ""
}

// checkArtifacts re-hashes an experiment's collected files.
func checkArtifacts(r Receipt) error {
	for rel, a := range r.Artifacts {
		sum, size, err := hashFile(filepath.Join(r.ArtifactDir, rel))
		if err != nil {
			return fmt.Errorf("artifact %s of %s: %w", rel, r.ID, err)
		}
		if sum != a.SHA256 || size != a.Bytes {
			return fmt.Errorf("artifact %s of %s changed since it was recorded", rel, r.ID)
		}
	}
	return nil
}

func verdictSchema() map[string]any {
	return map[string]any{
		"claim_id": "string (the claim under review)", "decision": "approved | needs_revision",
		"disposition": "supported | falsified | unresolved", "rationale": "string, at least 16 characters",
		"evidence_gaps": "array of strings (empty when approved, non-empty for needs_revision)", "next_test": "string or null",
	}
}

// ParseVerdict reads the reviewer's verdict from its last stdout line and
// checks it: a malformed or contradictory verdict never approves.
func ParseVerdict(line string, r Review, claim Claim) (Verdict, error) {
	line = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "```json"), "```"))
	var v Verdict
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("verdict is not the expected JSON object: %v", err)
	}
	if v.EvidenceGaps == nil {
		v.EvidenceGaps = []string{}
	}
	return v, checkVerdict(v, r, claim)
}

func checkVerdict(v Verdict, r Review, claim Claim) error {
	switch {
	case v.ClaimID != r.Claim:
		return fmt.Errorf("verdict is for claim %q, not %q", v.ClaimID, r.Claim)
	case v.Decision != "approved" && v.Decision != "needs_revision":
		return fmt.Errorf("verdict decision %q is not approved or needs_revision", v.Decision)
	case !slices.Contains([]string{"supported", "falsified", "unresolved"}, v.Disposition):
		return fmt.Errorf("verdict disposition %q is unknown", v.Disposition)
	case len(strings.TrimSpace(v.Rationale)) < 16:
		return fmt.Errorf("verdict rationale is shorter than 16 characters")
	case v.Decision == "needs_revision" && len(v.EvidenceGaps) == 0:
		return fmt.Errorf("a needs_revision verdict must name evidence gaps")
	case v.Decision != "approved":
		return nil
	case len(v.EvidenceGaps) > 0:
		return fmt.Errorf("an approval cannot keep evidence gaps")
	case v.Disposition == "unresolved":
		return fmt.Errorf("an approval cannot leave the claim unresolved")
	case v.Disposition != r.Disposition:
		return fmt.Errorf("verdict approves %s but %s was requested", v.Disposition, r.Disposition)
	case claim.Status != ClaimOpen && claim.Status != "unresolved" && claim.Status != v.Disposition:
		return fmt.Errorf("verdict contradicts the accepted status %s of claim %s", claim.Status, claim.ID)
	}
	return nil
}
