package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/simjecture/simjecture/store"
)

// This file is the host's routing of the scientific modes (contract
// section 12): which role works on which claim next, the assignment it
// runs under, and the completion rule.

// turnPlan is who the next worker turn is and where it resumes.
type turnPlan struct {
	role       Role
	claim      string
	assignment string
	cursor     string // the agent session to resume ("" for a fresh one)
	idle       time.Duration
	nextTest   string // the previous handoff's next test, for the prompt
}

// forcedNote is the next test of an assignment the host ends.
const forcedNote = "Continue from the receipts: the host ended the previous assignment (its operations were spent or the route changed)."

// planTurn chooses the next turn's role: minimal's worker, or the
// assignment the host routes to.
func (sv *Supervisor) planTurn(tx *store.Tx, st SupervisorState) (turnPlan, error) {
	if !slices.Contains(ScientificModes, sv.k.Mode) {
		return turnPlan{role: RoleWorker, cursor: st.WorkerCursor}, nil
	}
	a, prev, err := sv.assign(tx)
	if err != nil {
		return turnPlan{}, err
	}
	plan := turnPlan{role: a.Role, claim: a.Claim, assignment: a.ID, cursor: a.Cursor}
	if prev != nil && prev.Handoff != nil {
		plan.nextTest = prev.Handoff.NextTest
	}
	if sv.k.Mode == "frontier" {
		plan.cursor = st.WorkerCursor // one session across turns and assignments
		plan.idle = time.Duration(sv.k.TurnSeconds) * time.Second
	}
	return plan, nil
}

// assign returns the assignment of the next turn: the active one while it
// still fits the route and has operations left, else a new one (ending the
// old with a forced handoff). prev is the last ended assignment.
func (sv *Supervisor) assign(tx *store.Tx) (Assignment, *Assignment, error) {
	claims, err := listDocs[Claim](tx, store.Claims)
	if err != nil {
		return Assignment{}, nil, err
	}
	role, claim, ok := route(sv.k.Mode, claims)
	if !ok {
		return Assignment{}, nil, fmt.Errorf("no scientific claim is open or awaits a repair, and none is supported by the judge: " +
			"an unresolved ledger is never completion")
	}
	all, err := listDocs[Assignment](tx, store.Assignments)
	if err != nil {
		return Assignment{}, nil, err
	}
	var prev *Assignment
	for i := range all {
		a := all[i]
		if a.Status == AssignmentActive && a.Role == role && a.Claim == claim && a.Operations < a.MaxOps {
			return a, prev, nil
		}
		if a.Status == AssignmentActive {
			a = endAssignment(a, Handoff{Outcome: "inconclusive", NextTest: forcedNote, Forced: true})
			if err := putAssignment(tx, a); err != nil {
				return Assignment{}, nil, err
			}
			if err := appendEvent(tx, HandoffPayload{Assignment: a.ID, Forced: true, Outcome: a.Handoff.Outcome}); err != nil {
				return Assignment{}, nil, err
			}
		}
		prev = &a
	}
	a := Assignment{ID: fmt.Sprintf("asg_%04d", len(all)+1), Role: role, Claim: claim, Status: AssignmentActive,
		MaxOps: MaxAssignmentOps, Children: []string{}, CreatedAt: time.Now().UTC()}
	if err := putAssignment(tx, a); err != nil {
		return Assignment{}, nil, err
	}
	return a, prev, appendEvent(tx, AssignmentStartedPayload{Assignment: a.ID, Claim: claim, Role: role})
}

// route is the host's choice (original-modes.md §2.2): frontier's
// researcher owns root; structured sends the repair scientist to the first
// falsified leaf scientific claim, else the falsifier to the first open one.
func route(mode string, claims []Claim) (Role, string, bool) {
	sci := scientificClaims(claims)
	repaired := map[string]bool{}
	for _, c := range sci {
		if c.Relation == RelRepairs && c.Parent != nil {
			repaired[*c.Parent] = true
		}
	}
	if mode == "frontier" {
		for _, c := range sci {
			if c.Status == string(LedgerOpen) || c.Status == string(LedgerFalsified) && !repaired[c.ID] {
				return RoleResearcher, RootClaim, true
			}
		}
		return "", "", false
	}
	for _, c := range sci {
		if c.Status == string(LedgerFalsified) && !repaired[c.ID] {
			return RoleRepairScientist, c.ID, true
		}
	}
	for _, c := range sci {
		if c.Status == string(LedgerOpen) {
			return RoleFalsifier, c.ID, true
		}
	}
	return "", "", false
}

// scientificClaims are the scientific claims in the order they were registered.
func scientificClaims(claims []Claim) []Claim {
	var out []Claim
	for _, c := range claims {
		if kindOf(c) == KindScientific {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].OpSeq != out[j].OpSeq {
			return out[i].OpSeq < out[j].OpSeq
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// ScientificCompleted is section 12's rule: no scientific claim is open,
// and a leaf scientific claim (one no repairs claim names as its parent) is
// supported under the version an accepted support adjudication judged.
func ScientificCompleted(claims []Claim, reviews []Review) bool {
	sci := scientificClaims(claims)
	repaired := map[string]bool{}
	for _, c := range sci {
		if c.Status == string(LedgerOpen) {
			return false
		}
		if c.Relation == RelRepairs && c.Parent != nil {
			repaired[*c.Parent] = true
		}
	}
	for _, c := range sci {
		if repaired[c.ID] || c.Status != string(LedgerSupported) {
			continue
		}
		if slices.ContainsFunc(reviews, func(r Review) bool { return acceptedSupport(r, c) }) {
			return true
		}
	}
	return false
}

func acceptedSupport(r Review, c Claim) bool {
	return r.Stage == StageSupport && r.Claim == c.ID && r.Status == "resolved" && r.Verdict != nil &&
		r.Verdict.Decision == string(DecisionSufficient) && r.ContractVersion == c.DecisiveVersion
}

// roleEnv is the environment of a worker turn in its role.
func (sv *Supervisor) roleEnv(plan turnPlan) map[string]string {
	env := sv.agentEnv(true)
	if plan.role != RoleWorker {
		env["SIMJECTURE_ROLE"], env["SIMJECTURE_CLAIM"] = string(plan.role), plan.claim
	}
	return env
}

// keepCursor stores the session a worker turn ended in: per assignment in
// structured mode (a new assignment starts a fresh session), the study's
// in minimal and frontier.
func keepCursor(tx *store.Tx, st *SupervisorState, plan turnPlan, cursor string) error {
	if cursor == "" {
		return nil
	}
	if plan.assignment == "" || plan.idle > 0 {
		st.WorkerCursor = cursor
		return nil
	}
	var a Assignment
	d, err := tx.GetDoc(store.Assignments, plan.assignment)
	if err != nil {
		return fmt.Errorf("read assignment %s: %w", plan.assignment, err)
	}
	if err := json.Unmarshal(d.JSON, &a); err != nil {
		return fmt.Errorf("decode assignment %s: %w", plan.assignment, err)
	}
	a.Cursor, a.Turns = cursor, a.Turns+1
	return putAssignment(tx, a)
}

// experimentFreeze waits while experiments run before the next turn: in
// minimal and structured always (structured starts no new assignment while
// they run), in frontier only after an idle turn (the researcher works
// while they run, but is not woken for nothing).
func (sv *Supervisor) experimentFreeze(ctx context.Context) Status {
	if sv.k.Mode == "frontier" {
		var st SupervisorState
		err := sv.s.Read(ctx, func(tx *store.Tx) (err error) { st, err = getState(tx); return err })
		if err != nil || st.IdleStreak == 0 {
			return goOn
		}
	}
	return sv.waitForExperiments(ctx)
}

// label names the role and claim of a turn in its activity line.
func (p turnPlan) label() string {
	if p.role == RoleWorker {
		return ""
	}
	return fmt.Sprintf(" (%s on %s)", p.role, p.claim)
}

// idleWatch ends a frontier turn after a span with no new event in the
// study's log (no lab call, no experiment change).
type idleWatch struct {
	s      *store.Store
	idle   time.Duration
	head   int64
	active time.Time
}

func newIdleWatch(s *store.Store, idle time.Duration) *idleWatch {
	return &idleWatch{s: s, idle: idle, head: -1, active: time.Now()}
}

// expired reads the log's head and reports whether it stood still for idle.
func (w *idleWatch) expired(ctx context.Context) bool {
	if w.idle <= 0 {
		return false
	}
	var head int64
	if err := w.s.Read(ctx, func(tx *store.Tx) error { ev, err := tx.Head(); head = ev.Seq; return err }); err != nil {
		return false
	}
	if head != w.head {
		w.head, w.active = head, time.Now()
		return false
	}
	return time.Since(w.active) >= w.idle
}
