package benchtask

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// Grading settings.
const (
	HoldoutCount   = 3
	DefaultTimeout = 120 * time.Second
	maxSourceBytes = 1_000_000 // reduce.py and FINDINGS.md
	maxErrorChars  = 1500
	submittedFile  = "reduce.py"
	resultFile     = "result.json"
	findingsFile   = "FINDINGS.md"
)

// GradeRequest is one grading of a submission folder.
type GradeRequest struct {
	Task       string
	Submission string
	Backend    sandbox.Backend // a backend or auto; never replaced by another
	SelfExe    string          // this binary, for the sandbox's helper
	Timeout    time.Duration   // the whole grading's reducer budget; 0 = DefaultTimeout
	Trial      Trial           // model, agent and figures; the trial id is read from benchmark.json
	Seed       uint64          // holdout seed; 0 draws a fresh random one (tests fix it)
	// Run runs one sandboxed case; nil is sandbox.Run.
	Run func(context.Context, sandbox.Spec) (sandbox.Result, error)
}

// Grade grades a submission. Setup errors (unknown task, no working
// execution backend, unreadable submission) wrap ErrSetup; a failing
// submission is a normal Report with Passed false.
func Grade(ctx context.Context, req GradeRequest) (Report, error) {
	start := time.Now()
	t, err := Find(req.Task)
	if err != nil {
		return Report{}, err
	}
	if err := readableDir(req.Submission); err != nil {
		return Report{}, err
	}
	backend, err := resolveBackend(ctx, req.Backend)
	if err != nil {
		return Report{}, err
	}
	g, err := newGrading(t, req)
	if err != nil {
		return Report{}, err
	}
	rep := Report{SchemaVersion: SchemaVersion, Pack: PackName, Task: t.ID, PackVersion: PackVersion,
		ExecutionBackend: string(backend), Trial: g.trial(req)}
	rep.IntactInputs = intactInputs(req.Submission, g.given)
	rep.FindingsPresent = findingsPresent(filepath.Join(req.Submission, findingsFile))
	if err := g.check(ctx, backend, req, &rep); err != nil {
		return Report{}, err
	}
	if err := ctx.Err(); err != nil { // stopped runs say nothing of the submission
		return Report{}, fmt.Errorf("grading interrupted: %w", err)
	}
	rep.Passed = rep.IntactInputs && rep.FindingsPresent && allPassed(rep.Checks)
	rep.GradingWallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// grading holds one grading's cases and what went wrong so far.
type grading struct {
	task          Task
	given, unseen []Case
	errs          []string
	caseErrs      []caseErr // in order of first appearance
}

// caseErr is one reason some cases failed for.
type caseErr struct {
	why   string
	cases []string
}

// caseFailed records why case name failed; cases failing alike share one entry.
func (g *grading) caseFailed(name, why string) {
	for i := range g.caseErrs {
		if g.caseErrs[i].why == why {
			g.caseErrs[i].cases = append(g.caseErrs[i].cases, name)
			return
		}
	}
	g.caseErrs = append(g.caseErrs, caseErr{why: why, cases: []string{name}})
}

func newGrading(t Task, req GradeRequest) (*grading, error) {
	given, err := t.Given()
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	seed := req.Seed
	if seed == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("holdout seed: %w", err)
		}
		seed = binary.LittleEndian.Uint64(b[:]) | 1
	}
	unseen, err := t.Holdouts(seed, HoldoutCount)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	return &grading{task: t, given: given, unseen: unseen}, nil
}

// trial is the request's trial with the id of the submission's
// benchmark.json, else the sha256 of the submission's absolute path.
func (g *grading) trial(req GradeRequest) Trial {
	tr := req.Trial
	var b Benchmark
	if data, err := os.ReadFile(filepath.Join(req.Submission, BenchmarkFile)); err == nil && json.Unmarshal(data, &b) == nil && b.TrialID != "" {
		tr.TrialID = b.TrialID
		return tr
	}
	abs, _ := filepath.Abs(req.Submission)
	sum := sha256.Sum256([]byte(abs))
	tr.TrialID = hex.EncodeToString(sum[:16])
	return tr
}

// check runs every case and compares result.json, filling rep's checks
// and error.
func (g *grading) check(ctx context.Context, backend sandbox.Backend, req GradeRequest, rep *Report) error {
	if !rep.IntactInputs {
		g.errs = append(g.errs, "the inputs under raw/ are not the ones prepare wrote")
	}
	if !rep.FindingsPresent {
		g.errs = append(g.errs, "FINDINGS.md is missing or empty")
	}
	rep.Checks = append(rep.Checks, g.savedChecks(req.Submission)...)
	runs, err := g.runChecks(ctx, backend, req)
	if err != nil {
		return err
	}
	rep.Checks = append(rep.Checks, runs...)
	for _, e := range g.caseErrs {
		g.errs = append(g.errs, strings.Join(e.cases, ", ")+": "+e.why)
	}
	if len(g.errs) > 0 {
		msg := strings.Join(g.errs, "; ")
		if r := []rune(msg); len(r) > maxErrorChars {
			msg = string(r[:maxErrorChars-1]) + "…"
		}
		rep.Error = &msg
	}
	return nil
}

// savedChecks compares the submission's result.json with the reference on
// the given cases: saved:<case>:<metric>.
func (g *grading) savedChecks(dir string) []Check {
	var saved struct {
		Cases map[string]map[string]json.RawMessage `json:"cases"`
	}
	data, err := readRegular(filepath.Join(dir, resultFile))
	if err == nil {
		err = json.Unmarshal(data, &saved)
	}
	if err != nil {
		g.errs = append(g.errs, "result.json: "+err.Error())
	}
	var out []Check
	for _, c := range g.given {
		out = append(out, caseChecks("saved:"+c.Name+":", g.task.Metrics, saved.Cases[c.Name], c.Expected)...)
	}
	return out
}

// runChecks runs reduce.py on every given case and every holdout:
// <case>:<metric>.
func (g *grading) runChecks(ctx context.Context, backend sandbox.Backend, req GradeRequest) ([]Check, error) {
	all := append(append([]Case(nil), g.given...), g.unseen...)
	src, err := readRegular(filepath.Join(req.Submission, submittedFile))
	if err != nil {
		g.errs = append(g.errs, submittedFile+": "+err.Error())
		var out []Check
		for _, c := range all {
			out = append(out, caseChecks(c.Name+":", g.task.Metrics, nil, c.Expected)...)
		}
		return out, nil
	}
	r, cleanup, err := newCaseRun(backend, req, src)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	var out []Check
	for i, c := range all {
		got, why, err := r.one(ctx, c, i >= len(g.given))
		if err != nil {
			return nil, err
		}
		if why != "" {
			g.caseFailed(c.Name, why)
		}
		out = append(out, caseChecks(c.Name+":", g.task.Metrics, got, c.Expected)...)
	}
	return out, nil
}

func newCaseRun(backend sandbox.Backend, req GradeRequest, src []byte) (*caseRun, func(), error) {
	scratch, err := os.MkdirTemp("", "simjecture-grade-")
	if err != nil {
		return nil, nil, fmt.Errorf("grade: %w", err)
	}
	cleanup := func() {
		sandbox.Settle()
		_ = os.RemoveAll(scratch)
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	r := &caseRun{backend: backend, selfExe: req.SelfExe, scratch: scratch, deadline: time.Now().Add(timeout), run: req.Run}
	if r.run == nil {
		r.run = sandbox.Run
	}
	for _, f := range []struct {
		rel  string
		data []byte
	}{{runnerName, []byte(runnerPy)}, {reduceName, src}} {
		s, err := r.seal(f.rel, f.data)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		r.sealed = append(r.sealed, s)
	}
	return r, cleanup, nil
}

// resolveBackend probes the requested backend (auto: the one it selects)
// and refuses an unavailable one with the probe's reason and remedy.
func resolveBackend(ctx context.Context, b sandbox.Backend) (sandbox.Backend, error) {
	rep := sandbox.Select(ctx, b)
	chosen := b
	if b == sandbox.Auto {
		chosen = rep.Selected
	}
	if !rep.Available || chosen == "" {
		msg := fmt.Sprintf("execution backend %s is not available: %s", b, rep.Reason)
		if rep.Remedy != "" {
			msg += " (remedy: " + rep.Remedy + ")"
		}
		return "", fmt.Errorf("%s: %w", msg, ErrSetup)
	}
	return chosen, nil
}

// readableDir refuses a submission that is not a readable folder.
func readableDir(dir string) error {
	if _, err := os.ReadDir(dir); err != nil {
		return fmt.Errorf("--submission: %w: %w", err, ErrSetup)
	}
	return nil
}

// readRegular reads a regular file (no symlink) of at most maxSourceBytes.
func readRegular(p string) ([]byte, error) {
	info, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, errors.New("missing")
	case err != nil:
		return nil, err
	case !info.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case info.Size() > maxSourceBytes:
		return nil, fmt.Errorf("larger than %d bytes", maxSourceBytes)
	}
	return os.ReadFile(p)
}

// findingsPresent: FINDINGS.md is a regular file with non-blank text.
func findingsPresent(p string) bool {
	data, err := readRegular(p)
	return err == nil && strings.TrimSpace(string(data)) != ""
}

// intactInputs reports whether every given file is under raw/ as a regular
// file (no symlink on the way) with the bytes prepare wrote.
func intactInputs(dir string, given []Case) bool {
	want := inputHashes(given)
	for rel, sum := range want {
		if !regularWithin(dir, rel) {
			return false
		}
		got, _, err := sandbox.HashFile(filepath.Join(dir, rel))
		if err != nil || got != sum {
			return false
		}
	}
	return true
}

// regularWithin: every component of rel below dir is a real folder and the
// last a regular file.
func regularWithin(dir, rel string) bool {
	parts := strings.Split(rel, "/")
	p := dir
	for i, part := range parts {
		p = filepath.Join(p, part)
		info, err := os.Lstat(p)
		if err != nil || (i < len(parts)-1 && !info.IsDir()) || (i == len(parts)-1 && !info.Mode().IsRegular()) {
			return false
		}
	}
	return true
}
