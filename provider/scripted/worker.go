package scripted

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Retry limits: failed runs are replicated and refused reviews re-requested
// at most this many times before the worker stops and says so in a note.
const (
	maxRetries   = 3
	maxRevisions = 3
)

// noteMarker is the file in research/ that remembers the last note, so an
// unchanged situation is not noted twice (which would hide idle turns).
const noteMarker = ".scripted-agent-note"

// Worker runs one worker turn of the demo plan.
type Worker struct {
	Lab   Lab       // the harness
	Dir   string    // the research folder (the turn's working directory)
	Study string    // the campaign folder, for operator/hypothesis.txt
	Turn  string    // the turn number, for notes
	Log   io.Writer // one line per action
}

// turn is the state of one worker turn.
type turn struct {
	w      *Worker
	ctx    context.Context
	snap   *Snapshot
	crit   Criterion
	stated runSpec
	did    []string
	stuck  []string
}

// Run takes the next steps and returns; it never waits for experiments.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.ensureSource(); err != nil {
		return err
	}
	var snap Snapshot
	if err := w.Lab.Call(ctx, "status", struct{}{}, &snap); err != nil {
		return fmt.Errorf("read study snapshot: %w", err)
	}
	t := &turn{w: w, ctx: ctx, snap: &snap}
	err := t.advance()
	if nerr := t.note(); nerr != nil {
		err = errors.Join(err, nerr)
	}
	return err
}

// ensureSource writes kepler.py into research/ unless the agent already has one.
func (w *Worker) ensureSource() error {
	path := filepath.Join(w.Dir, SourceName)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := writeMissing(path, keplerSource); err != nil {
		return err
	}
	w.logf("wrote %s", path)
	return nil
}

// logf writes one log line.
func (w *Worker) logf(format string, a ...any) {
	if w.Log != nil {
		fmt.Fprintf(w.Log, "scripted-agent: "+format+"\n", a...)
	}
}

// advance dispatches on root's status.
func (t *turn) advance() error {
	root, ok := t.snap.claim(rootClaim)
	if !ok {
		return fmt.Errorf("snapshot has no root claim: %w", ErrProtocol)
	}
	statement := root.Statement
	if statement == "" {
		statement = t.w.operatorHypothesis()
	}
	crit, err := ParseCriterion(root.Acceptance, statement)
	if err != nil {
		return fmt.Errorf("root acceptance: %w", err)
	}
	t.crit, t.stated = crit, demoCase(statement)
	switch root.Status {
	case claimOpen, "":
		return t.advanceClaim(rootPlan(t.stated))
	case dispFalsified:
		return t.advanceRepair()
	default:
		t.w.logf("root is %s; nothing to do", root.Status)
		return nil
	}
}

// operatorHypothesis reads the campaign's hypothesis file, or returns "".
func (w *Worker) operatorHypothesis() string {
	if w.Study == "" {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(w.Study, "operator", "hypothesis.txt"))
	if err != nil {
		return ""
	}
	return string(data)
}

// advanceRepair commits the symplectic repair once and then tests it.
func (t *turn) advanceRepair() error {
	req := repairCommit(t.stated, t.crit)
	claim, ok := t.findRepair(req.Statement)
	if !ok {
		if err := t.w.Lab.Call(t.ctx, "commit", req, &claim); err != nil {
			return fmt.Errorf("commit repair: %w", err)
		}
		if claim.Status == "" {
			claim.Status = claimOpen
		}
		t.snap.Claims = append(t.snap.Claims, claim)
		t.act("committed repair claim %s (%s)", claim.ID, req.Acceptance)
	}
	switch claim.Status {
	case claimOpen:
		return t.advanceClaim(repairPlan(claim.ID, t.stated))
	case dispFalsified:
		t.stop("repair claim %s was falsified; the symplectic repair does not hold at the stated case", claim.ID)
	default:
		t.w.logf("repair claim %s is %s; nothing to do", claim.ID, claim.Status)
	}
	return nil
}

// findRepair returns the committed child of root with the given statement.
func (t *turn) findRepair(statement string) (Claim, bool) {
	for _, c := range t.snap.Claims {
		if c.Parent == rootClaim && strings.TrimSpace(c.Statement) == statement {
			return c, true
		}
	}
	return Claim{}, false
}

// act records an action for the log and the turn's note.
func (t *turn) act(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	t.w.logf("%s", msg)
	t.did = append(t.did, msg)
}

// stop records why the worker cannot go on without help.
func (t *turn) stop(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	t.w.logf("stopped: %s", msg)
	t.stuck = append(t.stuck, msg)
}

// note leaves a lab note of this turn's actions, unless it repeats the last one.
func (t *turn) note() error {
	parts := append(append([]string(nil), t.did...), t.stuck...)
	if len(parts) == 0 {
		t.w.logf("nothing to do this turn")
		return nil
	}
	body := strings.Join(parts, "; ")
	marker := filepath.Join(t.w.Dir, noteMarker)
	if last, err := os.ReadFile(marker); err == nil && string(last) == body {
		return nil
	}
	text := "scripted agent: " + body
	if t.w.Turn != "" {
		text = "scripted agent, turn " + t.w.Turn + ": " + body
	}
	if err := t.w.Lab.Call(t.ctx, "note", map[string]string{"statement": text}, nil); err != nil {
		return fmt.Errorf("leave note: %w", err)
	}
	if err := os.WriteFile(marker, []byte(body), 0o644); err != nil {
		return fmt.Errorf("remember note: %w", err)
	}
	return nil
}
