package engine

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/simjecture/simjecture/store"
)

// verifyContinuationRecord checks a continuation phase for verify: the
// snapshot against the stored contract's continuation block and against
// the block the study_created event recorded (a block edited to match an
// edited file is caught by the event's), each file whose recorded hash
// differs between the two blocks, and any file under operator/continuation/
// that neither block records. Every finding names the file.
func verifyContinuationRecord(c Campaign, tx *store.Tx) ([]string, error) {
	row, err := tx.GetStudy()
	if err != nil {
		return nil, err
	}
	stored, created, err := continuationBlocks(tx, row.ContractJSON)
	if err != nil {
		return nil, err
	}
	var f []string
	for _, finding := range append(continuationFindings(c, stored), continuationFindings(c, created)...) {
		if !slices.Contains(f, finding) {
			f = append(f, finding)
		}
	}
	f = append(f, blocksDiffer(stored, created)...)
	extra, err := unrecordedSnapshotFiles(c, stored, created)
	return append(f, extra...), err
}

// continuationBlocks decodes the continuation block of the stored contract
// and of the study_created event (nil where there is none or it does not
// decode; checkContract reports those).
func continuationBlocks(tx *store.Tx, stored json.RawMessage) (*Continuation, *Continuation, error) {
	var a, b struct {
		Continuation *Continuation `json:"continuation"`
	}
	_ = json.Unmarshal(stored, &a)
	h, err := readHistory(tx)
	if err != nil {
		return nil, nil, err
	}
	if h.contract != nil {
		_ = json.Unmarshal(h.contract, &b)
	}
	return a.Continuation, b.Continuation, nil
}

// blocksDiffer names each snapshot file whose recorded sha256 differs
// between the stored block and the study_created event's.
func blocksDiffer(stored, created *Continuation) []string {
	if stored == nil && created == nil {
		return nil
	}
	if stored == nil || created == nil {
		return []string{"frozen contract: the continuation block was added or removed after study_created recorded it"}
	}
	rec := map[string]string{}
	for _, w := range snapshotFiles(created) {
		rec[w.rel] = w.sha
	}
	var f []string
	for _, w := range snapshotFiles(stored) {
		if sha, ok := rec[w.rel]; !ok || sha != w.sha {
			f = append(f, fmt.Sprintf("frozen contract: continuation records %s with sha256 %s, study_created with %s", w.rel, short(w.sha), short(sha)))
		}
		delete(rec, w.rel)
	}
	for _, rel := range sortedKeys(rec) {
		f = append(f, fmt.Sprintf("frozen contract: continuation no longer records %s, which study_created recorded", rel))
	}
	if stored.ParentStudyID != created.ParentStudyID || stored.ParentReportSHA256 != created.ParentReportSHA256 {
		f = append(f, "frozen contract: the continuation block names another parent or parent report than study_created recorded")
	}
	return f
}

// unrecordedSnapshotFiles lists the files under operator/continuation/ that
// neither block records.
func unrecordedSnapshotFiles(c Campaign, blocks ...*Continuation) ([]string, error) {
	known := map[string]bool{}
	for _, b := range blocks {
		for _, w := range snapshotFiles(b) {
			known[w.rel] = true
		}
	}
	root := filepath.Join(c.Dir, filepath.FromSlash(ContinuationDir))
	var f []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && os.IsNotExist(err) && p == root:
			return filepath.SkipDir
		case err != nil:
			return err
		case d.IsDir():
			return nil
		}
		rel, _ := filepath.Rel(c.Dir, p)
		if rel = filepath.ToSlash(rel); !known[rel] {
			f = append(f, fmt.Sprintf("continuation snapshot %s is not recorded in the frozen contract (added after the study was created)", rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", ContinuationDir, err)
	}
	return f, nil
}
