package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/simjecture/simjecture/store"
)

// loadContract is the frozen study contract, read once per Lab.
func (l *Lab) loadContract(ctx context.Context) (Contract, error) {
	if l.contract == nil {
		k, err := LoadContract(ctx, l.S)
		if err != nil {
			return Contract{}, err
		}
		l.contract = &k
	}
	return *l.contract, nil
}

// checkRunMode: minimal takes neither claim nor stage workbench; the
// scientific modes need the claim an evidence run serves.
func checkRunMode(mode string, a RunArgs) error {
	scientific := slices.Contains(ScientificModes, mode)
	switch {
	case !scientific && a.Claim != "":
		return fmt.Errorf("lab run: claim is only in structured and frontier modes (use commitment): %w", ErrLab)
	case !scientific && a.Stage == "workbench":
		return fmt.Errorf("lab run: stage workbench is only in structured and frontier modes: %w", ErrLab)
	case scientific && (a.Stage == "" || a.Stage == "evidence") && a.Claim == "":
		return fmt.Errorf("lab run: an evidence run names the claim it serves (claim), or use stage workbench: %w", ErrLab)
	}
	return nil
}

// runGate is the host's gate before a run of the scientific modes is
// queued: the claim it serves is open and, for an evidence run on a claim
// with a contract, the latest version is approved as it is now. It returns
// the run's place in the durable order of ledger operations.
func (l *Lab) runGate(tx *store.Tx, r Receipt) (int64, error) {
	if _, err := l.assigned(tx, r.Claim); err != nil {
		return 0, err
	}
	if r.Claim != "" {
		c, err := getClaim(tx, r.Claim)
		if err != nil {
			return 0, err
		}
		if c.Status != string(LedgerOpen) {
			return 0, fmt.Errorf("%s is %s; runs serve open claims: %w", c.ID, c.Status, ErrLab)
		}
		if r.Stage == "evidence" && len(c.Contracts) > 0 {
			ok, why, err := l.approvalOf(tx, c)
			if err != nil {
				return 0, err
			}
			if !ok {
				return 0, fmt.Errorf("an evidence run needs an approved contract: %s (a workbench run needs none): %w", why, ErrLab)
			}
		}
	}
	return headSeq(tx)
}
