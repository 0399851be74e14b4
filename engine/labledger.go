package engine

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/simjecture/simjecture/store"
)

// ClaimArgs are the arguments of lab claim.
type ClaimArgs struct {
	Statement string  `json:"statement"`
	Kind      string  `json:"kind"`
	Relation  string  `json:"relation"`
	Parent    string  `json:"parent"`
	Rationale string  `json:"rationale"`
	Repair    *Repair `json:"repair"`
}

// Claim registers a claim of the ledger under its parent; the same request
// returns the same claim.
func (l *Lab) Claim(ctx context.Context, a ClaimArgs) (Claim, error) {
	if a.Parent == "" {
		a.Parent = RootClaim
	}
	var c Claim
	err := l.write(ctx, func(tx *store.Tx) error {
		if err := l.requireLedger(tx, "claim"); err != nil {
			return err
		}
		if err := checkClaimShape(a); err != nil {
			return err
		}
		as, err := l.assigned(tx, a.Parent)
		if err != nil {
			return err
		}
		if existing, err := getClaim(tx, claimID(a)); err == nil && as != nil && slices.Contains(as.Children, existing.ID) {
			c = existing // the same request again returns the same claim
			return nil
		}
		if err := checkClaimRole(as, a); err != nil {
			return err
		}
		if c, err = registerClaim(tx, a); err != nil || as == nil || slices.Contains(as.Children, c.ID) {
			return err
		}
		as.Children = append(as.Children, c.ID)
		return putAssignment(tx, *as)
	})
	if err != nil {
		return Claim{}, err
	}
	return c, nil
}

// checkClaimRole: a falsifier registers only non-scientific children; a
// repair scientist exactly one scientific repairs child of its claim.
func checkClaimRole(as *Assignment, a ClaimArgs) error {
	switch {
	case as == nil:
		return nil
	case as.Role == RoleFalsifier && ClaimKind(a.Kind) == KindScientific:
		return fmt.Errorf("a falsifier registers only instrument, diagnostic or control claims, not scientific ones: %w", ErrLab)
	case as.Role != RoleRepairScientist:
		return nil
	case ClaimKind(a.Kind) != KindScientific || Relation(a.Relation) != RelRepairs || a.Parent != as.Claim:
		return fmt.Errorf("the repair scientist registers one scientific repairs claim of %s, nothing else: %w", as.Claim, ErrLab)
	case len(as.Children) > 0:
		return fmt.Errorf("the repair scientist has registered its repair (%s) already: %w", as.Children[0], ErrLab)
	}
	return nil
}

// claimID is the id of the claim a request registers.
func claimID(a ClaimArgs) string {
	return shortHash("claim_", map[string]any{"statement": a.Statement, "kind": a.Kind, "relation": a.Relation,
		"parent": a.Parent, "rationale": a.Rationale, "repair": a.Repair})
}

func registerClaim(tx *store.Tx, a ClaimArgs) (Claim, error) {
	id := claimID(a)
	if existing, err := getClaim(tx, id); err == nil {
		return existing, nil
	}
	parent, err := getClaim(tx, a.Parent)
	if err != nil {
		return Claim{}, err
	}
	if err := checkClaimParent(a, parent); err != nil {
		return Claim{}, err
	}
	seq, err := headSeq(tx)
	if err != nil {
		return Claim{}, err
	}
	p := parent.ID
	c := Claim{ID: id, Statement: a.Statement, Parent: &p, Status: string(LedgerOpen), Rationale: a.Rationale,
		Kind: ClaimKind(a.Kind), Relation: Relation(a.Relation), Repair: a.Repair, OpSeq: seq, CreatedAt: time.Now().UTC()}
	if err := putClaim(tx, c); err != nil {
		return Claim{}, err
	}
	return c, appendEvent(tx, ClaimRegisteredPayload{Claim: c.ID, Kind: c.Kind, Parent: p, Relation: c.Relation, Statement: c.Statement})
}

// ContractArgs are the arguments of lab contract.
type ContractArgs struct {
	Claim                  string   `json:"claim"`
	Purpose                string   `json:"purpose"`
	Observable             string   `json:"observable"`
	ExpectedOutcomes       string   `json:"expected_outcomes"`
	DecisionRule           string   `json:"decision_rule"`
	RequiredObservation    string   `json:"required_observation"`
	UncertaintyCriterion   string   `json:"uncertainty_criterion"`
	InconclusiveConditions string   `json:"inconclusive_conditions"`
	Checks                 []Check  `json:"checks"`
	Binding                *Binding `json:"binding"`
}

// ContractResult is the answer of lab contract.
type ContractResult struct {
	Claim   string `json:"claim"`
	Version int    `json:"version"`
	Warning string `json:"warning,omitempty"`
}

// Contract registers a new version of a claim's evidence contract in one
// transaction with its event; repeating the latest version returns it.
func (l *Lab) Contract(ctx context.Context, a ContractArgs) (ContractResult, error) {
	if a.Purpose == "" {
		a.Purpose = string(PurposeDecision)
	}
	v, err := newContractVersion(a)
	if err != nil {
		return ContractResult{}, err
	}
	var res ContractResult
	err = l.write(ctx, func(tx *store.Tx) error {
		if err := l.requireLedger(tx, "contract"); err != nil {
			return err
		}
		as, err := l.assigned(tx, a.Claim)
		if err != nil {
			return err
		}
		if as != nil && as.Role == RoleRepairScientist && !slices.Contains(as.Children, a.Claim) {
			return fmt.Errorf("the repair scientist contracts only its own repair, not %s: %w", a.Claim, ErrLab)
		}
		if v.Binding != nil {
			if _, _, err := resolveUnder(l.C.Research(), "binding.source", v.Binding.Source); err != nil {
				return err
			}
		}
		res, err = registerContract(tx, a.Claim, v)
		return err
	})
	return res, err
}

func registerContract(tx *store.Tx, id string, v EvidenceContract) (ContractResult, error) {
	c, err := getClaim(tx, id)
	if err != nil {
		return ContractResult{}, err
	}
	if c.Status != string(LedgerOpen) {
		return ContractResult{}, fmt.Errorf("%s is %s; only an open claim takes a contract: %w", id, c.Status, ErrLab)
	}
	if last := c.latest(); last != nil && sameDesign(*last, v) {
		return ContractResult{Claim: id, Version: last.Version}, nil
	}
	if v.Purpose == PurposeTerminalRecord {
		if err := checkTerminalRecord(tx, c); err != nil {
			return ContractResult{}, err
		}
	}
	if v.OpSeq, err = headSeq(tx); err != nil {
		return ContractResult{}, err
	}
	v.Version, v.CreatedAt = len(c.Contracts)+1, time.Now().UTC()
	c.Contracts = append(c.Contracts, v)
	if err := putClaim(tx, c); err != nil {
		return ContractResult{}, err
	}
	res := ContractResult{Claim: id, Version: v.Version}
	if len(c.Links) > 0 {
		res.Warning = fmt.Sprintf("evidence is already linked; only runs queued after version %d can decide it", v.Version)
	}
	return res, appendEvent(tx, ContractRegisteredPayload{Claim: id, Purpose: v.Purpose, Version: v.Version})
}

// sameDesign reports whether two versions say the same thing.
func sameDesign(a, b EvidenceContract) bool {
	a.Version, a.OpSeq, a.CreatedAt = 0, 0, time.Time{}
	b.Version, b.OpSeq, b.CreatedAt = 0, 0, time.Time{}
	return bytes.Equal(canonicalJSON(a), canonicalJSON(b))
}

// newContractVersion checks the arguments and builds the unnumbered version.
func newContractVersion(a ContractArgs) (EvidenceContract, error) {
	purpose := ContractPurpose(a.Purpose)
	if purpose != PurposeDecision && purpose != PurposeTerminalRecord {
		return EvidenceContract{}, fmt.Errorf("purpose %q: choose decision or terminal_record: %w", a.Purpose, ErrLab)
	}
	for _, f := range []struct{ name, v string }{{"observable", a.Observable}, {"expected_outcomes", a.ExpectedOutcomes},
		{"decision_rule", a.DecisionRule}, {"required_observation", a.RequiredObservation},
		{"uncertainty_criterion", a.UncertaintyCriterion}, {"inconclusive_conditions", a.InconclusiveConditions}} {
		if err := longEnough(f.name, f.v); err != nil {
			return EvidenceContract{}, err
		}
	}
	checks, err := cleanChecks(purpose, a.Checks)
	if err != nil {
		return EvidenceContract{}, err
	}
	binding, err := cleanBinding(a.Binding)
	if err != nil {
		return EvidenceContract{}, err
	}
	return EvidenceContract{Purpose: purpose, Observable: a.Observable, ExpectedOutcomes: a.ExpectedOutcomes,
		DecisionRule: a.DecisionRule, RequiredObservation: a.RequiredObservation, UncertaintyCriterion: a.UncertaintyCriterion,
		InconclusiveConditions: a.InconclusiveConditions, Checks: checks, Binding: binding}, nil
}

func cleanChecks(purpose ContractPurpose, in []Check) ([]Check, error) {
	if purpose == PurposeDecision && len(in) == 0 {
		return nil, fmt.Errorf("a decision contract needs at least one check {output, path, equals}: %w", ErrLab)
	}
	out := make([]Check, len(in))
	for i, ch := range in {
		rel, err := cleanRel(fmt.Sprintf("checks[%d].output", i), ch.Output)
		if err != nil {
			return nil, err
		}
		p, err := ParseEvidencePath(ch.Path)
		if err != nil {
			return nil, fmt.Errorf("checks[%d]: %w", i, err)
		}
		out[i] = Check{Output: filepath.ToSlash(rel), Path: p.String(), Equals: ch.Equals}
	}
	return out, nil
}

func cleanBinding(b *Binding) (*Binding, error) {
	if b == nil {
		return nil, nil
	}
	rel, err := cleanRel("binding.source", b.Source)
	if err != nil {
		return nil, err
	}
	out := &Binding{Source: filepath.ToSlash(rel), Args: [][]string{}}
	for i, args := range b.Args {
		if slices.ContainsFunc(args, func(s string) bool { return strings.ContainsRune(s, 0) }) {
			return nil, fmt.Errorf("binding.args[%d] contains a NUL byte: %w", i, ErrLab)
		}
		if slices.ContainsFunc(out.Args, func(seen []string) bool { return slices.Equal(seen, args) }) {
			return nil, fmt.Errorf("binding.args[%d] repeats an earlier argument list: %w", i, ErrLab)
		}
		out.Args = append(out.Args, append([]string{}, args...))
	}
	return out, nil
}

// checkTerminalRecord: a terminal record is for a scientific claim that had
// a real attempt: an evidence run queued under an earlier decision version
// and linked to the claim (it need not have succeeded).
func checkTerminalRecord(tx *store.Tx, c Claim) error {
	if kindOf(c) != KindScientific {
		return fmt.Errorf("a terminal_record contract is for scientific claims only: %w", ErrLab)
	}
	for _, k := range c.Links {
		if k.ContractVersion == 0 || c.Contracts[k.ContractVersion-1].Purpose != PurposeDecision {
			continue
		}
		r, err := getReceipt(tx, k.Experiment)
		if err == nil && r.Stage == "evidence" && r.OpSeq > c.Contracts[k.ContractVersion-1].OpSeq {
			return nil
		}
	}
	return fmt.Errorf("a terminal_record contract needs a real attempt first: an evidence run linked under an earlier decision contract of %s: %w", c.ID, ErrLab)
}
