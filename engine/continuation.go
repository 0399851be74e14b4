package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/simjecture/simjecture/store"
)

// Continuation is what a continuation phase freezes of its parent study
// (contract section 14): the parent's identity and report, the hashes of
// the snapshot's summary, and every inherited file with its sha256.
type Continuation struct {
	ParentStudyID      string          `json:"parent_study_id"`
	ParentDir          string          `json:"parent_dir"`
	ParentReportSHA256 string          `json:"parent_report_sha256"`
	SummarySHA256      string          `json:"summary_sha256"`
	SummaryMDSHA256    string          `json:"summary_md_sha256"`
	Files              []InheritedFile `json:"files"`
}

// InheritedFile is one file a continuation took from its parent's research/.
type InheritedFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
}

// parentStudy is what a continuation read of its parent, which it opened
// read-only: the contract, the whole snapshot, the hypothesis as given and
// the sha256 of its report.json ("" when it has none).
type parentStudy struct {
	c         Campaign
	k         Contract
	snap      Snapshot
	hyp       operatorFile
	reportSHA string
}

// loadParent reads the study r continues from, or returns nil when r is no
// continuation. The parent is never written: its store is copied (with its
// WAL) into a temporary folder and read there.
func loadParent(ctx context.Context, child Campaign, r Request) (*parentStudy, error) {
	if r.ContinueFrom == "" {
		if len(r.InheritFiles) > 0 {
			return nil, badField(FieldInheritFile, "inherits from a parent study: give --continue-from")
		}
		return nil, nil
	}
	p, err := parentCampaign(child, r.ContinueFrom)
	if err != nil {
		return nil, err
	}
	ps := &parentStudy{c: p}
	if err := ps.read(ctx); err != nil {
		return nil, err
	}
	return ps, nil
}

// parentCampaign checks the parent's folder: a study, not the child nor
// around it, and not owned by a live supervisor (whose store is changing).
func parentCampaign(child Campaign, dir string) (Campaign, error) {
	p, err := NewCampaign(dir)
	if err != nil {
		return p, badField(FieldContinueFrom, "%w", err)
	}
	switch rel, err := filepath.Rel(p.Dir, child.Dir); {
	case !p.Exists():
		return p, badField(FieldContinueFrom, "%s holds no simjecture study", p.Dir)
	case err == nil && (rel == "." || !strings.HasPrefix(rel, "..")):
		return p, badField(FieldContinueFrom, "the new study %s would be inside its parent %s; choose a folder outside it", child.Dir, p.Dir)
	case Owned(p):
		return p, badField(FieldContinueFrom, "%s is running (its supervisor holds the lock); pause it or let it stop first", p.Dir)
	}
	return p, nil
}

// read loads the parent's record from a copy of its store, checks its own
// continuation snapshot, if any, and reads its hypothesis and report.
func (ps *parentStudy) read(ctx context.Context) error {
	if err := ps.readStore(ctx); err != nil {
		return err
	}
	if err := VerifyContinuation(ps.c, ps.k); err != nil {
		return badField(FieldContinueFrom, "%w", err)
	}
	hyp, err := readOperatorFile("parent hypothesis", FieldContinueFrom, filepath.Join(ps.c.Operator(), "hypothesis.txt"))
	if err != nil {
		return err
	}
	if hyp.sha != ps.k.HypothesisSHA256 {
		return badField(FieldContinueFrom, "%s: operator/hypothesis.txt differs from the parent's frozen hash", ps.c.Dir)
	}
	ps.hyp = hyp
	ps.reportSHA, err = hashIfPresent(filepath.Join(ps.c.Dir, "report.json"))
	if err != nil {
		return badField(FieldContinueFrom, "%s: report.json: %v", ps.c.Dir, unwrapPath(err))
	}
	return nil
}

// readStore copies the parent's database and WAL into a temporary folder,
// reads the contract and the whole snapshot there, and removes the copy.
func (ps *parentStudy) readStore(ctx context.Context) error {
	tmp, err := os.MkdirTemp("", "simjecture-parent-")
	if err != nil {
		return fmt.Errorf("copy the parent's store: %w", err)
	}
	defer os.RemoveAll(tmp)
	db := filepath.Join(tmp, "simjecture.db")
	for _, suffix := range []string{"", "-wal"} {
		if err := copyIfPresent(ps.c.DB()+suffix, db+suffix, suffix == ""); err != nil {
			return badField(FieldContinueFrom, "copy the parent's store: %w", err)
		}
	}
	s, err := store.Open(ctx, db)
	if err != nil {
		return badField(FieldContinueFrom, "%s: %w", ps.c.Dir, err)
	}
	defer s.Close()
	if ps.k, err = LoadContract(ctx, s); err != nil {
		return badField(FieldContinueFrom, "%s: %w", ps.c.Dir, err)
	}
	if ps.snap, err = LoadSnapshot(ctx, ps.c, s); err != nil {
		return badField(FieldContinueFrom, "%s: %w", ps.c.Dir, err)
	}
	return nil
}

// copyIfPresent copies src to dst; a missing src is an error only when
// required.
func copyIfPresent(src, dst string, required bool) error {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) && !required {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// hashIfPresent is the sha256 of a file, or "" when it does not exist.
func hashIfPresent(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// ContinuationPointer is the line every worker prompt of a continuation
// phase carries; empty for a study that continues none.
func ContinuationPointer(k Contract) string {
	if k.Continuation == nil {
		return ""
	}
	return fmt.Sprintf("\nThis study continues %s (%s); its history is in operator/continuation/ (summary.md, summary.json: "+
		"history only, nothing there is accepted here). Editable copies of the inherited files are in research/inherited/.\n",
		k.Continuation.ParentStudyID, k.Continuation.ParentDir)
}
