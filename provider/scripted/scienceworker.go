package scripted

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ScienceWorker runs one worker turn of the structured or frontier modes.
type ScienceWorker struct {
	Lab   Lab
	Dir   string // research/
	Study string // the campaign folder, for operator/hypothesis.txt
	Role  string // SIMJECTURE_ROLE
	Claim string // SIMJECTURE_CLAIM
	Log   io.Writer
}

// sciTurn is the state of one scientific turn.
type sciTurn struct {
	w      *ScienceWorker
	ctx    context.Context
	snap   sciSnapshot
	crit   Criterion
	stated runSpec // the hypothesis's stated case
}

// Run takes the next steps of the role's assignment and returns.
func (w *ScienceWorker) Run(ctx context.Context) error {
	for name, body := range map[string][]byte{SourceName: keplerSource, CheckName: energyCheckSource} {
		if err := writeMissing(filepath.Join(w.Dir, name), body); err != nil {
			return err
		}
	}
	t := &sciTurn{w: w, ctx: ctx}
	if err := w.Lab.Call(ctx, "status", map[string]int{"limit": 100}, &t.snap); err != nil {
		return fmt.Errorf("read the ledger: %w", err)
	}
	root, ok := t.snap.claim(rootClaim)
	if !ok {
		return fmt.Errorf("the ledger has no root: %w", ErrProtocol)
	}
	crit, err := ParseCriterion(root.Statement, w.operatorHypothesis())
	if err != nil {
		return fmt.Errorf("root's criterion: %w", err)
	}
	t.crit, t.stated = crit, demoCase(root.Statement)
	role, claim := w.Role, w.Claim
	if role == roleResearcher { // one researcher owns the tree and routes itself
		role, claim = t.snap.route()
	}
	switch role {
	case roleRepair:
		return t.repair(claim)
	case roleFalsifier:
		return t.test(claim)
	case "":
		t.logf("nothing to route: no open or unrepaired scientific claim")
		return nil
	}
	return fmt.Errorf("role %q: %w", role, ErrEnv)
}

func writeMissing(path string, body []byte) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("check %s: %w", path, err)
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func (w *ScienceWorker) operatorHypothesis() string {
	return (&Worker{Study: w.Study}).operatorHypothesis()
}

func (t *sciTurn) logf(format string, a ...any) {
	if t.w.Log != nil {
		fmt.Fprintf(t.w.Log, "scripted-agent (%s): "+format+"\n", append([]any{t.w.Role}, a...)...)
	}
}

func (t *sciTurn) call(name string, req, out any) error {
	if err := t.w.Lab.Call(t.ctx, name, req, out); err != nil {
		return err
	}
	t.logf("lab %s done", name)
	return nil
}

// handoff ends a structured assignment; the researcher has none to end.
func (t *sciTurn) handoff(outcome, next string, exps ...string) error {
	if t.w.Role == roleResearcher {
		return nil
	}
	if exps == nil {
		exps = []string{}
	}
	return t.call("handoff", map[string]any{"outcome": outcome, "experiments": exps, "next_test": next}, nil)
}

// caseOf is the case a claim is tested at: the hypothesis's stated case,
// with a repair's own method.
func (t *sciTurn) caseOf(c sciClaim) (runSpec, *runSpec) {
	s := t.stated
	if c.isRepair() {
		if m := statedMethods(c.Statement); len(m) > 0 {
			s.Method = m[0]
		}
		harder := challengeOf(s)
		return s, &harder
	}
	return s, nil
}

// test is the falsifier's work on one claim: qualify on the workbench,
// contract in the direction the qualification showed, get the contract
// reviewed, run the evidence, link it, and then falsify or ask the judge.
func (t *sciTurn) test(id string) error {
	c, ok := t.snap.claim(id)
	if !ok {
		return fmt.Errorf("no claim %s: %w", id, ErrProtocol)
	}
	stated, harder := t.caseOf(c)
	args := checkArgs(stated, t.crit.Threshold, harder, stated.Method+"_check.json")
	if len(c.Contracts) == 0 {
		return t.qualifyAndContract(c, args)
	}
	ok, refused := t.snap.approved(c)
	switch {
	case refused:
		return t.handoff("blocked", "the contract review asked for revisions; read its evidence gaps")
	case !ok:
		return t.askContractReview(c)
	}
	return t.evidence(c, args)
}

// qualifyAndContract runs the workbench once and contracts what it showed.
func (t *sciTurn) qualifyAndContract(c sciClaim, args []string) error {
	wb, ok := t.snap.runOf(c.ID, "workbench")
	if !ok {
		return t.call("run", t.runReq(c.ID, "workbench", args, "qualify the energy check at the stated case"), nil)
	}
	if wb.Status != statusSucceeded {
		t.logf("waiting for workbench run %s (%s)", wb.ID, wb.Status)
		return nil
	}
	doc, err := readCheck(wb.ArtifactDir, argValue(args, "--out"))
	if err != nil {
		return err
	}
	t.logf("workbench: %s max_rel_energy_error %g, within %g: %v", doc.Stated.Method, doc.Stated.MaxErr, doc.Tolerance, doc.Within)
	req := contractFor(c, args, !doc.Within, t.crit)
	if err := t.call("contract", req, nil); err != nil {
		return err
	}
	return t.call("review", map[string]any{"stage": "contract", "claim": c.ID}, nil)
}

func (t *sciTurn) askContractReview(c sciClaim) error {
	for _, r := range t.snap.Reviews {
		if r.Stage == "contract" && r.Claim == c.ID && r.ContractVersion == len(c.Contracts) {
			t.logf("waiting for the contract review of %s", c.ID)
			return nil
		}
	}
	return t.call("review", map[string]any{"stage": "contract", "claim": c.ID}, nil)
}

// evidence runs, links and decides under an approved contract.
func (t *sciTurn) evidence(c sciClaim, args []string) error {
	r, ok := t.snap.runOf(c.ID, "evidence")
	if !ok {
		return t.call("run", t.runReq(c.ID, "evidence", args, "evidence under the approved contract"), nil)
	}
	if pending(r.Status) {
		t.logf("waiting for evidence run %s", r.ID)
		return nil
	}
	var link sciLink
	if err := t.call("link", map[string]any{"claim": c.ID, "experiment": r.ID, "output": argValue(args, "--out"),
		"sufficient": true, "note": "the contracted check on a fresh evidence run"}, &link); err != nil {
		return err
	}
	if !link.Counts {
		return t.handoff("blocked", "the evidence does not count: "+oneLine(fmt.Sprint(link.Reasons)), r.ID)
	}
	if falsifies(c.Contracts[len(c.Contracts)-1]) {
		if err := t.call("close", map[string]any{"claim": c.ID, "status": dispFalsified,
			"reason": "the contracted check found the energy error above the tolerance on a fresh evidence run"}, nil); err != nil {
			return err
		}
		return t.handoff(dispFalsified, "repair it: a symplectic integrator for the same orbit", r.ID)
	}
	return t.askSupport(c, r)
}

func (t *sciTurn) askSupport(c sciClaim, r sciReceipt) error {
	doc, err := readCheck(r.ArtifactDir, argValue(r.Args, "--out"))
	if err != nil {
		return err
	}
	cs := fmt.Sprintf("Evidence run %s under the approved contract: max_rel_energy_error %g at the stated case", r.ID, doc.Stated.MaxErr)
	if doc.Challenge != nil {
		cs += fmt.Sprintf(" and %g at the challenge (e = %g, %g orbits)", doc.Challenge.MaxErr, doc.Challenge.E, doc.Challenge.Orbits)
	}
	cs += fmt.Sprintf(", within the tolerance %g.", doc.Tolerance)
	if err := t.call("review", map[string]any{"stage": "support", "claim": c.ID, "case": cs}, nil); err != nil {
		return err
	}
	return t.handoff("inconclusive", "the judge decides the support request of "+c.ID, r.ID)
}

func (t *sciTurn) runReq(claim, stage string, args []string, purpose string) map[string]any {
	return map[string]any{"source": CheckName, "args": args, "inputs": []string{SourceName},
		"outputs": []string{argValue(args, "--out")}, "timeout": runTimeoutSeconds, "stage": stage, "claim": claim, "purpose": purpose}
}
