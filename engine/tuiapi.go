package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// This file is the small facade the terminal UI needs beyond View: it may
// import only engine, so listing studies, probing backends and creating a
// study from typed-in text live here.

// StudyEntry is one study under a workspace root, as the home screen lists it.
type StudyEntry struct {
	Dir              string
	Name             string // the folder's path relative to the root
	Status           Status // "" when Err is set
	ExecutionBackend string
	Deadline         time.Time
	RemainingSeconds int64
	Hypothesis       string
	Owned            bool // a live supervisor holds the lock
	Err              string
}

// ListStudies finds the studies in root and in its subfolders (two levels
// deep), newest deadline first. A missing root is an empty list.
func ListStudies(ctx context.Context, root string) ([]StudyEntry, error) {
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

// BackendProbe is one execution backend choice with its live probe result.
type BackendProbe struct {
	Backend     string // auto or a name from ExecutionBackends
	Available   bool
	Selected    string // for auto: the backend it picks
	Reason      string
	Remedy      string
	Warning     string
	Cooperative bool // not a security sandbox
}

// ExecutionBackend is one execution backend as user interfaces show it,
// from the sandbox's table.
type ExecutionBackend struct {
	Name        string
	Label       string // the new-study choice
	Short       string // the status-bar mode indicator
	Title       string // the warning pane's heading
	Column      string // a table column
	Explains    string // how experiments run, for the warning pane
	Warning     string // cooperative backends: contains "not a security sandbox"
	Cooperative bool   // not a security sandbox
	Preselect   bool   // a form may preselect it (auto may pick it)
}

// CooperativeNotice is the one-line warning for every cooperative backend.
const CooperativeNotice = sandbox.CooperativeNotice

// ExecutionBackends lists every execution backend in the order auto
// considers them and the new-study form shows them (after auto).
func ExecutionBackends() []ExecutionBackend {
	rows := sandbox.Backends()
	out := make([]ExecutionBackend, 0, len(rows))
	for _, r := range rows {
		out = append(out, ExecutionBackend{Name: string(r.Name), Label: r.Label, Short: r.Short, Title: r.Title,
			Column: r.Column, Explains: r.Explains, Warning: r.Warning, Cooperative: r.Cooperative, Preselect: r.AutoCandidate})
	}
	return out
}

// DescribeBackend returns the row of execution backend b; false for auto
// and unknown names.
func DescribeBackend(b string) (ExecutionBackend, bool) {
	for _, r := range ExecutionBackends() {
		if r.Name == b {
			return r, true
		}
	}
	return ExecutionBackend{}, false
}

// ProbeBackends probes auto and every concrete backend, in the order the
// new-study form shows them.
func ProbeBackends(ctx context.Context) []BackendProbe {
	order := []sandbox.Backend{sandbox.Auto}
	for _, r := range sandbox.Backends() {
		order = append(order, r.Name)
	}
	out := make([]BackendProbe, 0, len(order))
	for _, b := range order {
		r := sandbox.Select(ctx, b)
		out = append(out, BackendProbe{Backend: string(b), Available: r.Available && (b != sandbox.Auto || r.Selected != ""),
			Selected: string(r.Selected), Reason: r.Reason, Remedy: r.Remedy, Warning: r.Warning,
			Cooperative: sandbox.IsCooperative(b) || sandbox.IsCooperative(r.Selected)})
	}
	return out
}

// IsCooperativeBackend reports whether an execution backend is cooperative:
// not a security sandbox.
func IsCooperativeBackend(b string) bool { return sandbox.IsCooperative(sandbox.Backend(b)) }

// CreateStudyText creates a study like CreateStudy, probing with
// sandbox.Select; a hypothesis or instructions given as text (when the
// request names no file) is written to a temporary file first.
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
	if err := write(&r.HypothesisFile, "hypothesis.txt", hypothesis); err != nil {
		return Contract{}, fmt.Errorf("new study: %w", err)
	}
	if err := write(&r.InstructionsFile, "instructions.txt", instructions); err != nil {
		return Contract{}, fmt.Errorf("new study: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(c.Dir), 0o755); err != nil {
		return Contract{}, fmt.Errorf("new study: %w", err)
	}
	return CreateStudy(ctx, c, r, sandbox.Select)
}

// SupervisorPID is the pid of the live supervisor of the study, or 0.
func (v *View) SupervisorPID(ctx context.Context) (int, error) {
	if !Owned(v.c) {
		return 0, nil
	}
	var st SupervisorState
	err := v.s.Read(ctx, func(tx *store.Tx) (err error) { st, err = getState(tx); return err })
	if err != nil {
		return 0, fmt.Errorf("read supervisor state: %w", err)
	}
	return st.PID, nil
}
