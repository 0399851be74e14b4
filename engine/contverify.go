package engine

import (
	"errors"
	"fmt"
	"path/filepath"
)

// VerifyContinuation re-hashes the frozen snapshot of a continuation phase
// (nothing for a study that continues none): the summary, its markdown and
// every inherited file under operator/continuation/ must be regular files,
// reached through no symlink, with their recorded sha256. The first that is
// not is named; a study whose snapshot changed does not open.
func VerifyContinuation(c Campaign, k Contract) error {
	cont := k.Continuation
	if cont == nil {
		return nil
	}
	want := []struct{ rel, sha string }{
		{summaryJSONName, cont.SummarySHA256},
		{summaryMDName, cont.SummaryMDSHA256},
	}
	for _, f := range cont.Files {
		want = append(want, struct{ rel, sha string }{"files/" + f.Path, f.SHA256})
	}
	for _, w := range want {
		rel := ContinuationDir + "/" + w.rel
		if err := checkFrozenSnapshotFile(c.Dir, rel, w.sha); err != nil {
			return fmt.Errorf("continuation snapshot %s %s; the study will not open: %w", rel, err.Error(), ErrInvalid)
		}
	}
	return nil
}

// checkFrozenSnapshotFile checks one file of the snapshot, rel from dir.
func checkFrozenSnapshotFile(dir, rel, sha string) error {
	if _, err := inheritRel(rel); err != nil {
		return errors.New("is not a plain path")
	}
	if err := noSymlinks(dir, rel); err != nil {
		return errors.New("is missing, not a regular file or reached through a symlink")
	}
	got, _, err := hashFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Errorf("cannot be read: %v", unwrapPath(err))
	}
	if got != sha {
		return fmt.Errorf("changed (sha256 %s, recorded %s)", short(got), short(sha))
	}
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
