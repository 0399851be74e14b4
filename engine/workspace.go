package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// The workspace: the studies under a root folder, and creating a study
// from typed-in text.

// StudyEntry is one study under a workspace root, as the home screen lists it.
type StudyEntry struct {
	Dir              string
	Name             string // the folder's path relative to the root; " (record)" marks a bundled record
	Status           Status // "" when Err is set
	ExecutionBackend string
	Deadline         time.Time
	RemainingSeconds int64
	Hypothesis       string
	Owned            bool // a live supervisor holds the lock
	Record           bool // a bundled record written by WriteRecord: nothing in it ran here
	Err              string
}

// ListStudies finds the studies in root and in its subfolders (two levels
// deep), newest deadline first. A missing root is an empty list.
func ListStudies(ctx context.Context, root string) ([]StudyEntry, error) {
	if problem := workspaceProblem(root); problem != "" {
		return nil, errors.New(problem)
	}
	var out []StudyEntry
	var scan func(dir string, depth int) error
	scan = func(dir string, depth int) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if os.IsNotExist(err) && depth == 0 {
				return nil
			}
			return fmt.Errorf("list studies: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			c := Campaign{Dir: p}
			if c.Exists() {
				out = append(out, studyEntry(ctx, root, c))
			} else if depth < 1 {
				_ = scan(p, depth+1)
			}
		}
		return nil
	}
	if err := scan(root, 0); err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Deadline.After(out[j].Deadline) })
	return out, nil
}

func studyEntry(ctx context.Context, root string, c Campaign) StudyEntry {
	e := StudyEntry{Dir: c.Dir, Name: c.Dir}
	if rel, err := filepath.Rel(root, c.Dir); err == nil {
		e.Name = rel
	}
	if e.Record = IsRecord(c); e.Record {
		e.Name += " (record)"
	}
	v, err := OpenView(ctx, c)
	if err != nil {
		e.Err = err.Error()
		return e
	}
	defer v.Close()
	snap, err := loadSnapshot(ctx, c, v.s, 0) // the list needs no experiment
	if err != nil {
		e.Err = err.Error()
		return e
	}
	e.Status, e.ExecutionBackend, e.Deadline, e.RemainingSeconds = snap.Status, string(snap.ExecutionBackend), snap.Deadline, snap.RemainingSeconds
	for _, cl := range snap.Claims {
		if cl.ID == RootClaim {
			e.Hypothesis = cl.Statement
		}
	}
	e.Owned = Owned(c)
	return e
}

// CreateStudyText creates a study like CreateStudy, probing with
// sandbox.Select; a hypothesis or instructions given as text (when the
// request names no file) is written to a temporary file first. Like
// CreateStudy it writes nothing (not even the parent folder) when refused.
func CreateStudyText(ctx context.Context, c Campaign, r Request, hypothesis, instructions string) (Contract, error) {
	tmp, err := os.MkdirTemp("", "simjecture-new-")
	if err != nil {
		return Contract{}, fmt.Errorf("new study: %w", err)
	}
	defer os.RemoveAll(tmp)
	write := func(path *string, name, text string) error {
		if *path != "" {
			return nil
		}
		*path = filepath.Join(tmp, name)
		return os.WriteFile(*path, []byte(text), 0o600)
	}
	// A continuation keeps its parent's hypothesis unless one is typed.
	if keepParent := r.ContinueFrom != "" && strings.TrimSpace(hypothesis) == ""; !keepParent {
		if err := write(&r.HypothesisFile, "hypothesis.txt", hypothesis); err != nil {
			return Contract{}, fmt.Errorf("new study: %w", err)
		}
	}
	if err := write(&r.InstructionsFile, "instructions.txt", instructions); err != nil {
		return Contract{}, fmt.Errorf("new study: %w", err)
	}
	return CreateStudy(ctx, c, r, sandbox.Select)
}

// CheckWorkspace refuses a workspace root that cannot hold studies: a
// file, or a path with a file where a folder should be. A missing root is
// fine (it is made when the first study is).
func CheckWorkspace(root string) error {
	if problem := workspaceProblem(root); problem != "" {
		return fmt.Errorf("%s: %w", problem, ErrInvalid)
	}
	return nil
}

// workspaceProblem is what is wrong with the workspace root, on one short
// line that says it first (the home screen cuts a line to its width), or "".
func workspaceProblem(root string) string {
	st, err := os.Stat(root)
	switch {
	case err == nil && !st.IsDir():
		return "the workspace root is a file, not a folder: " + Printable(root)
	case errors.Is(err, syscall.ENOTDIR):
		return "the workspace root has a file in its path: " + Printable(root)
	}
	return ""
}
