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
	if f := continuationFindings(c, k.Continuation); len(f) > 0 {
		return fmt.Errorf("%s; the study will not open: %w", f[0], ErrInvalid)
	}
	return nil
}

// snapshotFile is one file of the frozen snapshot: its path from the
// campaign folder and its recorded sha256.
type snapshotFile struct{ rel, sha string }

// snapshotFiles lists the files a continuation block records.
func snapshotFiles(cont *Continuation) []snapshotFile {
	if cont == nil {
		return nil
	}
	want := []snapshotFile{
		{ContinuationDir + "/" + summaryJSONName, cont.SummarySHA256},
		{ContinuationDir + "/" + summaryMDName, cont.SummaryMDSHA256},
	}
	for _, f := range cont.Files {
		want = append(want, snapshotFile{ContinuationDir + "/files/" + f.Path, f.SHA256})
	}
	return want
}

// continuationFindings re-hashes every file a continuation block records,
// one finding per file that does not match, in the block's order.
func continuationFindings(c Campaign, cont *Continuation) []string {
	var f []string
	for _, w := range snapshotFiles(cont) {
		if err := checkFrozenSnapshotFile(c.Dir, w.rel, w.sha); err != nil {
			f = append(f, fmt.Sprintf("continuation snapshot %s %s", w.rel, err.Error()))
		}
	}
	return f
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
