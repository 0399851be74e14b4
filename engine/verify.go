package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/simjecture/simjecture/store"
)

// Verify checks the record: the store is a sound SQLite file, the event
// chain is unbroken and ends where report.json says, every row matches its
// record event (notes and token totals their own events), report.json and
// LEDGER.md say what the store says when no supervisor runs, every
// recorded input, artifact, log and review packet still has its hash, and
// the claims and the contract mean what the events say (CheckConsistency). It returns one finding per problem; none means
// intact. A malformed store is reported alone: nothing read from it counts.
func Verify(ctx context.Context, c Campaign, s *store.Store) ([]string, error) {
	if bad := s.IntegrityCheck(ctx); len(bad) > 0 {
		return bad, nil
	}
	var findings, more []string
	var exps []Receipt
	var reviews []Review
	err := s.Read(ctx, func(tx *store.Tx) error {
		var err error
		if findings, err = tx.VerifyChain(); err != nil {
			return err
		}
		if exps, err = listDocs[Receipt](tx, store.Experiments); err != nil {
			return err
		}
		if reviews, err = listDocs[Review](tx, store.Reviews); err != nil {
			return err
		}
		more, err = verifyGuidanceAndContinuation(c, tx, exps)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	for _, r := range exps {
		findings = append(findings, verifyReceipt(c, c.Place(r))...)
	}
	findings = append(append(findings, verifyPackets(c, reviews)...), more...)
	findings = append(findings, verifyTurnLogs(ctx, c, s)...)
	records, err := verifyRecords(ctx, c, s)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	meaning, err := CheckConsistency(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	return append(append(findings, records...), meaning...), nil
}

// verifyGuidanceAndContinuation checks the operator guidance, the notes
// and the token totals and, for a continuation phase, its frozen snapshot.
func verifyGuidanceAndContinuation(c Campaign, tx *store.Tx, exps []Receipt) ([]string, error) {
	f, err := verifySteering(tx, exps)
	if err != nil {
		return nil, err
	}
	notes, err := verifyNotesAndUsage(tx)
	if err != nil {
		return nil, err
	}
	cont, err := verifyContinuationRecord(c, tx)
	return append(append(f, notes...), cont...), err
}

func verifyReceipt(c Campaign, r Receipt) []string {
	var f []string
	for _, rel := range sortedKeys(r.Inputs) {
		sum := r.Inputs[rel]
		got, _, err := hashFile(c.SealedBlob(sum))
		if err != nil {
			f = append(f, fmt.Sprintf("%s: sealed input %s is missing (%v)", r.ID, rel, err))
		} else if got != sum {
			f = append(f, fmt.Sprintf("%s: sealed input %s changed (%s)", r.ID, rel, c.SealedBlob(sum)))
		}
	}
	for _, rel := range sortedKeys(r.Artifacts) {
		a := r.Artifacts[rel]
		path := filepath.Join(r.ArtifactDir, rel)
		got, size, err := hashFile(path)
		switch {
		case err != nil:
			f = append(f, fmt.Sprintf("%s: artifact %s is missing (%v)", r.ID, path, err))
		case got != a.SHA256 || size != a.Bytes:
			f = append(f, fmt.Sprintf("%s: artifact %s changed", r.ID, path))
		}
	}
	return append(f, verifyLogs(r)...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
