package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Where a continuation keeps its parent's snapshot: frozen under
// operator/continuation/, editable copies under research/inherited/.
const (
	ContinuationDir = "operator/continuation"
	InheritedDir    = "research/inherited"
	summaryJSONName = "summary.json"
	summaryMDName   = "summary.md"
)

// continuationAuthority says what the snapshot is worth in the child.
const continuationAuthority = "history only: nothing accepted in the parent is accepted here; " +
	"its reviews, verdicts and receipts are not evidence of this study, and its root claim starts open"

// contSnapshot is the snapshot a continuation writes, with its descriptor.
type contSnapshot struct {
	desc        Continuation
	summaryJSON []byte
	summaryMD   []byte
	files       []inheritedFile
}

// summaryClaim, summaryReview and summaryReceipt are the parent's records
// as the summary keeps them: history, with each receipt's hash.
type summaryClaim struct {
	ID        string  `json:"id"`
	Parent    *string `json:"parent"`
	Status    string  `json:"status"`
	Statement string  `json:"statement"`
}

type summaryReview struct {
	ID          string `json:"id"`
	Claim       string `json:"claim"`
	Status      string `json:"status"`
	Disposition string `json:"disposition"`
	Decision    string `json:"decision,omitempty"`
	Rationale   string `json:"rationale,omitempty"`
}

type summaryReceipt struct {
	ID            string   `json:"id"`
	Status        string   `json:"status"`
	Stage         string   `json:"stage"`
	Source        string   `json:"source,omitempty"`
	Args          []string `json:"args"`
	ReceiptSHA256 string   `json:"receipt_sha256"`
}

type continuationSummary struct {
	Authority        string            `json:"authority"`
	ParentStudyID    string            `json:"parent_study_id"`
	ParentDir        string            `json:"parent_dir"`
	ParentStatus     Status            `json:"parent_status"`
	ParentDeadline   time.Time         `json:"parent_deadline"`
	Hypothesis       string            `json:"hypothesis"`
	ExperimentCounts map[ExpStatus]int `json:"experiment_counts"`
	Claims           []summaryClaim    `json:"claims"`
	Reviews          []summaryReview   `json:"reviews"`
	Experiments      []summaryReceipt  `json:"experiments"`
	InheritedFiles   []InheritedFile   `json:"inherited_files"`
}

// buildSnapshot reads the chosen files of the parent and builds the
// summary and the descriptor, refusing more than MaxSnapshotBytes in all.
func buildSnapshot(ps *parentStudy, rels []string) (contSnapshot, error) {
	files, err := readInherited(ps.c.Research(), rels)
	if err != nil {
		return contSnapshot{}, err
	}
	sum := ps.summary(files)
	cs := contSnapshot{summaryJSON: append(canonicalJSON(sum), '\n'), summaryMD: []byte(summaryMarkdown(sum)), files: files}
	if n := len(cs.summaryJSON) + len(cs.summaryMD) + inheritedBytes(files); n > MaxSnapshotBytes {
		return contSnapshot{}, badField(FieldInheritFile, "the snapshot (summary and files) is %d bytes, more than 16 MiB; choose fewer files", n)
	}
	cs.desc = Continuation{ParentStudyID: ps.k.StudyID, ParentDir: ps.c.Dir, ParentReportSHA256: ps.reportSHA,
		SummarySHA256: sha256Hex(cs.summaryJSON), SummaryMDSHA256: sha256Hex(cs.summaryMD), Files: sum.InheritedFiles}
	return cs, nil
}

func (ps *parentStudy) summary(files []inheritedFile) continuationSummary {
	s := continuationSummary{Authority: continuationAuthority, ParentStudyID: ps.k.StudyID, ParentDir: ps.c.Dir,
		ParentStatus: ps.snap.Status, ParentDeadline: ps.k.Deadline, Hypothesis: strings.TrimSpace(string(ps.hyp.text)),
		ExperimentCounts: ps.snap.ExperimentCounts, Claims: []summaryClaim{}, Reviews: []summaryReview{},
		Experiments: []summaryReceipt{}, InheritedFiles: []InheritedFile{}}
	for _, c := range ps.snap.Claims {
		s.Claims = append(s.Claims, summaryClaim{ID: c.ID, Parent: c.Parent, Status: c.Status, Statement: c.Statement})
	}
	for _, r := range ps.snap.Reviews {
		sr := summaryReview{ID: r.ID, Claim: r.Claim, Status: r.Status, Disposition: r.Disposition}
		if r.Verdict != nil {
			sr.Decision, sr.Rationale = r.Verdict.Decision, r.Verdict.Rationale
		}
		s.Reviews = append(s.Reviews, sr)
	}
	for _, e := range ps.snap.Experiments {
		s.Experiments = append(s.Experiments, summaryReceipt{ID: e.ID, Status: string(e.Status), Stage: e.Stage,
			Source: e.Source, Args: e.Args, ReceiptSHA256: sha256Hex(canonicalJSON(e))})
	}
	for _, f := range files {
		s.InheritedFiles = append(s.InheritedFiles, InheritedFile{Path: f.rel, SHA256: f.sha, Bytes: len(f.text)})
	}
	return s
}

// summaryMarkdown is the short human account of the summary.
func summaryMarkdown(s continuationSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Continuation of %s\n\nParent: %s (%s, deadline %s).\n\n**Authority:** %s.\n\n",
		s.ParentStudyID, s.ParentDir, s.ParentStatus, s.ParentDeadline.Format(time.RFC3339), s.Authority)
	fmt.Fprintf(&b, "## Claims\n\n")
	for _, c := range s.Claims {
		fmt.Fprintf(&b, "- %s (%s in the parent): %s\n", c.ID, c.Status, oneLineText(c.Statement, 300))
	}
	fmt.Fprintf(&b, "\n## Reviews\n\n")
	for _, r := range s.Reviews {
		fmt.Fprintf(&b, "- %s on %s: %s %s\n", r.ID, r.Claim, r.Status, r.Decision)
	}
	fmt.Fprintf(&b, "\n## Experiments\n\n%d receipts (summary.json lists each with its sha256):", len(s.Experiments))
	counts := map[string]int{}
	for st, n := range s.ExperimentCounts {
		counts[string(st)] = n
	}
	for _, st := range sortedKeys(counts) {
		fmt.Fprintf(&b, " %s %d;", st, counts[st])
	}
	fmt.Fprintf(&b, "\n\n## Inherited files (editable copies in research/inherited/)\n\n")
	for _, f := range s.InheritedFiles {
		fmt.Fprintf(&b, "- %s (%d bytes, sha256 %s)\n", f.Path, f.Bytes, f.SHA256)
	}
	return b.String()
}

func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// write puts the snapshot into the new study c: the frozen copy (read-only
// files) and the editable copies of the inherited files.
// planned is what write writes: path relative to the campaign folder →
// content (the creation marker lists it first).
func (cs contSnapshot) planned() map[string][]byte {
	out := map[string][]byte{
		ContinuationDir + "/" + summaryJSONName: cs.summaryJSON,
		ContinuationDir + "/" + summaryMDName:   cs.summaryMD,
	}
	for _, f := range cs.files {
		out[ContinuationDir+"/files/"+f.rel] = f.text
		out[InheritedDir+"/"+f.rel] = f.text
	}
	return out
}

func (cs contSnapshot) write(c Campaign) error {
	frozen := filepath.Join(c.Dir, ContinuationDir)
	if err := writeFileIn(frozen, summaryJSONName, cs.summaryJSON, 0o444); err != nil {
		return err
	}
	if err := writeFileIn(frozen, summaryMDName, cs.summaryMD, 0o444); err != nil {
		return err
	}
	for _, f := range cs.files {
		if err := writeFileIn(filepath.Join(frozen, "files"), f.rel, f.text, 0o444); err != nil {
			return err
		}
		if err := writeFileIn(filepath.Join(c.Dir, InheritedDir), f.rel, f.text, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeFileIn(dir, rel string, b []byte, mode os.FileMode) error {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("continuation snapshot: %w", err)
	}
	if err := writeCreating(path, b, mode); err != nil {
		return fmt.Errorf("continuation snapshot: %w", err)
	}
	return nil
}
