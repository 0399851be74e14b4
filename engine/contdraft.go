package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxInheritCandidates bounds how many entries of a parent's research/ the
// continue form lists (a picker, not an archive browser).
const MaxInheritCandidates = 256

// InheritCandidate is one entry of a parent's research/ as the TUI's
// continue form offers it: a file that passes the selection rules (Refused
// empty) with its size, or an entry refused with the rule's reason.
type InheritCandidate struct {
	Path    string // relative to research/, slash-separated
	Bytes   int64
	Refused string
}

// ContinuationDraft is what a continuation of a study starts from in the
// TUI: a request prefilled from the parent's contract (agent backend,
// model, executable, connection file, execution backend, completion policy,
// turn seconds and ContinueFrom; the budget is new) and the candidates for
// inheriting. Truncated says research/ had more entries than were listed.
type ContinuationDraft struct {
	Parent    string
	Request   Request
	Files     []InheritCandidate
	Truncated bool
}

// ContinuationDraft reads the study's contract and lists its research/
// for a continuation; it writes nothing.
func (v *View) ContinuationDraft(ctx context.Context) (ContinuationDraft, error) {
	k, err := LoadContract(ctx, v.s)
	if err != nil {
		return ContinuationDraft{}, err
	}
	d := ContinuationDraft{Parent: v.c.Dir, Request: Request{
		Mode: "minimal", AgentBackend: k.AgentBackend, Model: k.Model, Executable: k.Executable,
		ProviderConfig: k.ProviderConfig, ExecutionBackend: string(k.ExecutionBackend), CompletionPolicy: k.CompletionPolicy,
		WallSeconds: 3600, TurnSeconds: k.TurnSeconds, ContinueFrom: v.c.Dir,
	}}
	d.Files, d.Truncated, err = InheritCandidates(v.c.Research())
	return d, err
}

// errEnough stops the walk once MaxInheritCandidates entries are listed.
var errEnough = errors.New("enough candidates")

// InheritCandidates lists the entries of a research folder, in path order,
// each file checked by the rules `--inherit-file` applies (readInherited);
// a hidden folder or a symlink is one refused entry, never entered.
func InheritCandidates(root string) ([]InheritCandidate, bool, error) {
	if err := checkResearchRoot(root); err != nil {
		return nil, false, err
	}
	var out []InheritCandidate
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if len(out) == MaxInheritCandidates {
			return errEnough
		}
		rel, _ := filepath.Rel(root, p)
		c, skip := candidate(root, filepath.ToSlash(rel), d)
		if c != nil {
			out = append(out, *c)
		}
		return skip
	})
	if errors.Is(err, errEnough) {
		return out, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", root, err)
	}
	return out, false, nil
}

// candidate is the listing of one entry (nil for a folder that is entered)
// and filepath.SkipDir for a folder that is not.
func candidate(root, rel string, d fs.DirEntry) (*InheritCandidate, error) {
	hidden := strings.HasPrefix(d.Name(), ".")
	switch {
	case d.IsDir() && !hidden:
		return nil, nil
	case d.IsDir():
		return &InheritCandidate{Path: rel + "/", Refused: "hidden folder; hidden files are never inherited"}, filepath.SkipDir
	case d.Type()&fs.ModeSymlink != 0:
		return &InheritCandidate{Path: rel, Refused: "a symlink; symlinks are never inherited"}, nil
	}
	c := &InheritCandidate{Path: rel}
	if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
		c.Bytes = st.Size()
	}
	if _, err := inheritRel(rel); err != nil {
		c.Refused = refusal(rel, err)
		return c, nil
	}
	if _, err := readInheritFile(root, rel); err != nil {
		c.Refused = refusal(rel, err)
	}
	return c, nil
}

// refusal is a selection rule's reason without the field or the path.
func refusal(rel string, err error) string {
	msg := err.Error()
	if fe, ok := AsFieldError(err); ok && fe.Err != nil {
		msg = fe.Err.Error()
	}
	msg = strings.TrimPrefix(msg, rel)
	return strings.TrimSpace(strings.TrimPrefix(msg, ":"))
}
