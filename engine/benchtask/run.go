package benchtask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/simjecture/simjecture/provider"
)

// Trial runs and their limits.
const (
	maxFeedbackChecks = 30 // failed check names listed in one feedback
	maxIdleTurns      = 3  // turns in a row that change no deliverable end a trial
	maxTrials         = 100
)

// RunRequest is `bench run`: Trials trials of one task by one agent, each
// with its own folder, wall budget and deadline, graded after every turn.
type RunRequest struct {
	Task   string
	Output string // a new folder: trial-N/ (the agent's), logs/, grades/
	Trials int
	Agent  provider.Agent
	Model  string
	Wall   time.Duration // per trial
	Turn   time.Duration // per turn, at most what is left
	Grade  GradeRequest  // backend, binary and reducer timeout of every grading
	// Progress, when set, is told of each turn's grade (one short line).
	Progress func(line string)
}

// RunTrials runs the trials in order and returns their final grade
// reports, each also written to Output/grades/trial-N.json with its trial
// figures (wall seconds, seconds to the first pass). Setup errors wrap
// ErrSetup; an agent that fails only fails its trial.
func RunTrials(ctx context.Context, req RunRequest) ([]Report, error) {
	if _, err := Find(req.Task); err != nil {
		return nil, err
	}
	switch {
	case req.Trials < 1 || req.Trials > maxTrials:
		return nil, fmt.Errorf("--trials must be 1 to %d, got %d: %w", maxTrials, req.Trials, ErrSetup)
	case req.Wall <= 0 || req.Turn <= 0 || req.Turn > req.Wall:
		return nil, fmt.Errorf("--wall-seconds and --turn-seconds must satisfy 0 < turn <= wall: %w", ErrSetup)
	}
	if _, err := os.Lstat(req.Output); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--output %s: the folder exists (bench run writes a new one): %w", req.Output, ErrSetup)
	}
	if _, err := resolveBackend(ctx, req.Grade.Backend); err != nil {
		return nil, err
	}
	var out []Report
	for i := 1; i <= req.Trials; i++ {
		rep, err := runTrial(ctx, req, i)
		if err != nil {
			return out, err
		}
		if err := writeReport(filepath.Join(req.Output, "grades", fmt.Sprintf("trial-%d.json", i)), rep); err != nil {
			return out, err
		}
		out = append(out, rep)
	}
	return out, nil
}

// trial is one trial under way.
type trial struct {
	req      RunRequest
	n        int
	dir      string
	start    time.Time
	deadline time.Time
	cursor   string
	feedback string
}

func runTrial(ctx context.Context, req RunRequest, n int) (Report, error) {
	t := &trial{req: req, n: n, dir: filepath.Join(req.Output, fmt.Sprintf("trial-%d", n)), start: time.Now()}
	t.deadline = t.start.Add(req.Wall)
	if _, err := Prepare(req.Task, t.dir); err != nil {
		return Report{}, err
	}
	var last Report
	var first *float64
	idle, before := 0, deliverables(t.dir)
	for turn := 1; time.Until(t.deadline) > 0 && ctx.Err() == nil && idle < maxIdleTurns; turn++ {
		rep, err := t.turn(ctx, turn)
		if err != nil {
			return Report{}, err
		}
		last = rep
		if rep.Passed {
			s := time.Since(t.start).Seconds()
			first = &s
			break
		}
		if now := deliverables(t.dir); now == before {
			idle++
		} else {
			idle, before = 0, now
		}
	}
	wall := time.Since(t.start).Seconds()
	last.Trial.Model, last.Trial.Agent = req.Model, req.Agent.Name()
	last.Trial.WallSeconds, last.Trial.FirstPassSeconds = &wall, first
	return last, nil
}

// turn runs one agent turn and grades the folder after it.
func (t *trial) turn(ctx context.Context, n int) (Report, error) {
	logs := filepath.Join(t.req.Output, "logs", fmt.Sprintf("trial-%d", t.n), fmt.Sprintf("turn-%d", n))
	left := time.Until(t.deadline)
	out, err := t.req.Agent.RunTurn(ctx, provider.Turn{Role: "worker", Number: n, Prompt: t.prompt(n, left), Dir: t.dir,
		LogDir: logs, Timeout: min(t.req.Turn, left), Cursor: t.cursor, Model: t.req.Model,
		Env: map[string]string{"SIMJECTURE_ROLE": "worker", "SIMJECTURE_TURN": fmt.Sprint(n)}})
	if err != nil {
		return Report{}, fmt.Errorf("trial %d turn %d: %w", t.n, n, err)
	}
	t.cursor = out.Cursor
	g := t.req.Grade
	g.Task, g.Submission = t.req.Task, t.dir
	g.Timeout = min(orDefault(g.Timeout), max(time.Until(t.deadline), time.Second))
	rep, err := Grade(ctx, g)
	if err != nil {
		return Report{}, fmt.Errorf("trial %d turn %d: %w", t.n, n, err)
	}
	t.feedback = Feedback(rep, out.Failure)
	if err := os.WriteFile(filepath.Join(logs, "feedback.txt"), []byte(t.feedback+"\n"), 0o644); err != nil {
		return Report{}, fmt.Errorf("trial %d turn %d: %w", t.n, n, err)
	}
	if t.req.Progress != nil {
		t.req.Progress(fmt.Sprintf("trial %d turn %d: %s", t.n, n, strings.SplitN(t.feedback, "\n", 2)[0]))
	}
	return rep, nil
}

func orDefault(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultTimeout
	}
	return d
}

// prompt is the turn's prompt: the task, the time left and the last grade.
func (t *trial) prompt(n int, left time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Benchmark task %s, turn %d. Your working folder is this one: read TASK.md and deliver reduce.py, "+
		"result.json and FINDINGS.md here. Do not change raw/. About %d s are left for this trial.\n", t.req.Task, n, int(left.Seconds()))
	if t.feedback != "" {
		b.WriteString("\n" + t.feedback + "\n")
	}
	return b.String()
}

// Feedback tells the agent how its last grade went: failed checks by name
// (at most maxFeedbackChecks), missing findings, changed inputs, the
// error, and a failure of its own turn; never a value.
func Feedback(rep Report, turn *provider.Failure) string {
	if rep.Passed {
		return "Grade: PASSED."
	}
	var b strings.Builder
	b.WriteString("Grade after your last turn: FAILED.")
	if failed := rep.FailedChecks(); len(failed) > 0 {
		shown := failed[:min(len(failed), maxFeedbackChecks)]
		fmt.Fprintf(&b, "\nFailed checks (%d): %s", len(failed), strings.Join(shown, ", "))
	}
	if !rep.IntactInputs {
		b.WriteString("\nThe inputs under raw/ were changed.")
	}
	if !rep.FindingsPresent {
		b.WriteString("\nFINDINGS.md is missing or empty.")
	}
	if rep.Error != nil {
		b.WriteString("\nWhat went wrong: " + *rep.Error)
	}
	if turn != nil {
		fmt.Fprintf(&b, "\nYour turn itself failed (%s).", turn.Category)
	}
	return b.String()
}

// deliverables fingerprints what a turn is meant to change.
func deliverables(dir string) string {
	h := sha256.New()
	for _, name := range []string{submittedFile, resultFile, findingsFile} {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}
