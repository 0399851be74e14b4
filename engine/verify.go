package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/simjecture/simjecture/store"
)

// Verify re-hashes every recorded input and artifact and checks the event
// chain. It returns one finding per problem; none means intact.
func Verify(ctx context.Context, c Campaign, s *store.Store) ([]string, error) {
	var findings []string
	var exps []Receipt
	err := s.Read(ctx, func(tx *store.Tx) error {
		var err error
		if findings, err = tx.VerifyChain(); err != nil {
			return err
		}
		exps, err = listDocs[Receipt](tx, store.Experiments)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	for _, r := range exps {
		findings = append(findings, verifyReceipt(c, c.Place(r))...)
	}
	more, err := verifyRecords(ctx, c, s)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	return append(findings, more...), nil
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
	return f
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
