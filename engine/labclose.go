package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/simjecture/simjecture/store"
)

// CloseArgs are the arguments of lab close.
type CloseArgs struct {
	Claim           string `json:"claim"`
	Status          string `json:"status"`
	Reason          string `json:"reason"`
	ContractVersion *int   `json:"contract_version"`
}

// closeStatuses are the statuses lab close may set; supported is never a
// close (only an accepted support adjudication sets it).
var closeStatuses = []ClaimStatus{LedgerFalsified, LedgerWeakened, LedgerSuperseded, LedgerUnresolved, LedgerInstrumentLimited}

// CloseClaim (lab close) closes an open claim through the deterministic gate.
func (l *Lab) CloseClaim(ctx context.Context, a CloseArgs) (Claim, error) {
	status := ClaimStatus(a.Status)
	if status == LedgerSupported {
		return Claim{}, fmt.Errorf("supported is never a close: only an accepted support adjudication closes a claim as supported: %w", ErrLab)
	}
	if !slices.Contains(closeStatuses, status) {
		return Claim{}, fmt.Errorf("status %q: choose falsified, weakened, superseded, unresolved or instrument_limited: %w", a.Status, ErrLab)
	}
	if err := longEnough("reason", a.Reason); err != nil {
		return Claim{}, err
	}
	var c Claim
	err := l.write(ctx, func(tx *store.Tx) error {
		if err := l.requireLedger(tx, "close"); err != nil {
			return err
		}
		as, err := l.assigned(tx, a.Claim)
		if err != nil {
			return err
		}
		if as != nil && as.Role == RoleFalsifier && a.Claim == as.Claim && status != LedgerFalsified {
			return fmt.Errorf("the falsifier closes its claim %s only as falsified: %w", as.Claim, ErrLab)
		}
		if c, err = getClaim(tx, a.Claim); err != nil {
			return err
		}
		version, err := l.closeGate(tx, c, status, a.ContractVersion)
		if err != nil {
			return err
		}
		c.Status, c.ClosedReason, c.DecisiveVersion = string(status), a.Reason, version
		if err := putClaim(tx, c); err != nil {
			return err
		}
		return appendEvent(tx, ClaimClosedPayload{Claim: c.ID, ContractVersion: version, Reason: a.Reason, Status: status})
	})
	if err != nil {
		return Claim{}, err
	}
	return c, nil
}

// closeGate checks a close and returns its decisive contract version (0
// for a close that is not contract-backed).
func (l *Lab) closeGate(tx *store.Tx, c Claim, status ClaimStatus, version *int) (int, error) {
	switch {
	case c.Status != string(LedgerOpen):
		return 0, fmt.Errorf("%s is already %s: %w", c.ID, c.Status, ErrLab)
	case status == LedgerSuperseded && c.ID == RootClaim:
		return 0, fmt.Errorf("root is the operator's hypothesis and is never superseded: %w", ErrLab)
	case status == LedgerFalsified:
		return l.decisiveGate(tx, c, version, status)
	case version == nil:
		return 0, nil
	case status == LedgerWeakened || status == LedgerSuperseded:
		return 0, fmt.Errorf("%s is never contract-backed; leave out contract_version: %w", status, ErrLab)
	}
	v, err := selectVersion(c, version)
	if err != nil {
		return 0, err
	}
	if v.Purpose != PurposeTerminalRecord {
		return 0, fmt.Errorf("%s under contract version %d needs a terminal_record contract, not %s: %w", status, v.Version, v.Purpose, ErrLab)
	}
	return v.Version, nil
}

// decisiveGate: a falsification or a support needs the latest contract,
// a decision contract approved as it is now, and a link under it that
// still counts.
func (l *Lab) decisiveGate(tx *store.Tx, c Claim, version *int, status ClaimStatus) (int, error) {
	v, err := selectVersion(c, version)
	if err != nil {
		return 0, err
	}
	if v.Purpose != PurposeDecision {
		return 0, fmt.Errorf("%s needs a decision contract; version %d is %s: %w", status, v.Version, v.Purpose, ErrLab)
	}
	ok, why, err := l.approvalOf(tx, c)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%s needs an approved contract: %s: %w", status, why, ErrLab)
	}
	for _, k := range c.Links {
		if k.ContractVersion != v.Version || !k.Counts {
			continue
		}
		r, err := getReceipt(tx, k.Experiment)
		if err != nil {
			return 0, err
		}
		if len(l.linkReasons(c, r, k)) == 0 { // re-checked on the outputs as they are now
			return v.Version, nil
		}
	}
	return 0, fmt.Errorf("%s needs a sufficient link that counts under contract version %d of %s: %w", status, v.Version, c.ID, ErrLab)
}

// selectVersion is the named contract version, which must be the latest
// (a newer version voids what an older one decided), or the latest.
func selectVersion(c Claim, version *int) (EvidenceContract, error) {
	v := c.latest()
	if v == nil {
		return EvidenceContract{}, fmt.Errorf("%s has no evidence contract: %w", c.ID, ErrLab)
	}
	if version != nil && *version != v.Version {
		return EvidenceContract{}, fmt.Errorf("contract version %d of %s is not the latest (%d): %w", *version, c.ID, v.Version, ErrLab)
	}
	return *v, nil
}
