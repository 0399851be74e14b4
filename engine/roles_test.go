package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/store"
)

// startAssignment plays the host: it makes role the active assignment on claim.
func startAssignment(t testing.TB, lab *Lab, role Role, claim string) Assignment {
	t.Helper()
	var a Assignment
	err := lab.S.Tx(context.Background(), func(tx *store.Tx) error {
		all, err := listDocs[Assignment](tx, store.Assignments)
		if err != nil {
			return err
		}
		for _, old := range all {
			if old.Status == AssignmentActive {
				if err := putAssignment(tx, endAssignment(old, Handoff{Outcome: "inconclusive", Forced: true})); err != nil {
					return err
				}
			}
		}
		a = Assignment{ID: fmt.Sprintf("asg_%04d", len(all)+1), Role: role, Claim: claim, Status: AssignmentActive,
			MaxOps: MaxAssignmentOps, Children: []string{}, CreatedAt: time.Now().UTC()}
		return putAssignment(tx, a)
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// falsifiedRoot contracts, approves, runs, links and falsifies root as
// the operator, and returns the counting experiment.
func falsifiedRoot(t testing.TB, lab *Lab) string {
	t.Helper()
	mustCall[ContractResult](t, lab, "contract", contractArgs("root", ""))
	approveContract(t, lab, RootClaim, DecisionApproved)
	r := mustCall[Receipt](t, lab, "run", evidenceRun("root", "x"))
	finishRun(t, lab, r.ID, ExpSucceeded, map[string]string{"r.json": goodResult})
	mustCall[Link](t, lab, "link", fmt.Sprintf(`{"claim":"root","experiment":%q,"output":"r.json","sufficient":true}`, r.ID))
	mustCall[Claim](t, lab, "close", `{"claim":"root","status":"falsified","reason":"the check passed"}`)
	return r.ID
}

func repairArgs(exp string) string {
	return fmt.Sprintf(`{"statement":"inner planets obey Kepler's third law","kind":"scientific","relation":"repairs","parent":"root",`+
		`"rationale":"the outer orbit broke it","repair":{"counterexamples":[%q],"accommodation":"drop the outer planet",`+
		`"semantic_change":"a narrower scope","falsification_condition":"an inner planet off the law"}}`, exp)
}

// TestRoleRefusals: each escape from a role is a one-line lab error that
// changes nothing, and the same request gives the same error.
func TestRoleRefusals(t *testing.T) {
	_, s, lab := newScientificStudy(t, "structured")
	exp := falsifiedRoot(t, lab)
	startAssignment(t, lab, RoleRepairScientist, RootClaim)
	wantRefused(t, s, "lab run is not a call of the repair_scientist", func() error {
		_, err := call[Receipt](t, lab, "run", `{"source":"orbit.py","outputs":["r.json"],"stage":"workbench"}`)
		return err
	})
	wantRefused(t, s, "lab link is not a call of the repair_scientist", func() error {
		_, err := call[Link](t, lab, "link", fmt.Sprintf(`{"claim":"root","experiment":%q,"output":"r.json","sufficient":true}`, exp))
		return err
	})
	wantRefused(t, s, "registers one scientific repairs claim", func() error {
		_, err := call[Claim](t, lab, "claim", `{"statement":"the tool is accurate","kind":"instrument","relation":"instrument_of","rationale":"trust the tool"}`)
		return err
	})
	wantRefused(t, s, "handoff registered needs", func() error { _, err := call[Assignment](t, lab, "handoff", `{"outcome":"registered"}`); return err })
	repair := mustCall[Claim](t, lab, "claim", repairArgs(exp))
	wantRefused(t, s, "has registered its repair", func() error {
		_, err := call[Claim](t, lab, "claim", strings.Replace(repairArgs(exp), "drop the outer planet", "drop the outermost planets", 1))
		return err
	})
	wantRefused(t, s, "contracts only its own repair", func() error { _, err := call[ContractResult](t, lab, "contract", contractArgs("root", "")); return err })
	mustCall[ContractResult](t, lab, "contract", contractArgs(repair.ID, ""))
	mustCall[Assignment](t, lab, "handoff", `{"outcome":"registered"}`)

	startAssignment(t, lab, RoleFalsifier, repair.ID)
	wantRefused(t, s, "registers only instrument, diagnostic or control claims", func() error {
		_, err := call[Claim](t, lab, "claim", fmt.Sprintf(`{"statement":"a refinement of it","kind":"scientific","relation":"refines","parent":%q,"rationale":"narrower still"}`, repair.ID))
		return err
	})
	wantRefused(t, s, "closes its claim "+repair.ID+" only as falsified", func() error {
		_, err := call[Claim](t, lab, "close", fmt.Sprintf(`{"claim":%q,"status":"weakened","reason":"says too much"}`, repair.ID))
		return err
	})
	wantRefused(t, s, "outside assignment", func() error {
		_, err := call[Receipt](t, lab, "run", evidenceRun("root", "y"))
		return err
	})
	wantRefused(t, s, "supported is never a close", func() error {
		_, err := call[Claim](t, lab, "close", fmt.Sprintf(`{"claim":%q,"status":"supported","reason":"it held up"}`, repair.ID))
		return err
	})
	wantRefused(t, s, "must be one of", func() error { _, err := call[Assignment](t, lab, "handoff", `{"outcome":"supported"}`); return err })
	wantRefused(t, s, "handoff falsified needs", func() error { _, err := call[Assignment](t, lab, "handoff", `{"outcome":"falsified"}`); return err })
	wantRefused(t, s, "is not linked to a claim of assignment", func() error {
		_, err := call[Assignment](t, lab, "handoff", fmt.Sprintf(`{"outcome":"inconclusive","experiments":[%q]}`, exp))
		return err
	})
	mustCall[Claim](t, lab, "claim", fmt.Sprintf(`{"statement":"the integrator is accurate","kind":"instrument","relation":"instrument_of","parent":%q,"rationale":"trust the tool"}`, repair.ID))
}

// TestAssignmentBudget: an assignment's operations are counted in the
// call's own transaction, and the budget is firm; a refused call costs none.
func TestAssignmentBudget(t *testing.T) {
	_, s, lab := newScientificStudy(t, "structured")
	a := startAssignment(t, lab, RoleFalsifier, RootClaim)
	err := s.Tx(context.Background(), func(tx *store.Tx) error { a.MaxOps = 2; return putAssignment(tx, a) })
	if err != nil {
		t.Fatal(err)
	}
	wantRefused(t, s, "outside assignment", func() error {
		_, err := call[ContractResult](t, lab, "contract", contractArgs("claim_nope", ""))
		return err
	})
	mustCall[ContractResult](t, lab, "contract", contractArgs("root", ""))
	mustCall[Review](t, lab, "review", `{"stage":"contract","claim":"root"}`)
	wantRefused(t, s, "has used its 2 operations", func() error {
		_, err := call[Receipt](t, lab, "run", `{"source":"orbit.py","outputs":["r.json"],"stage":"workbench"}`)
		return err
	})
	if cur, err := call[StatusSummary](t, lab, "status", `{}`); err != nil || cur.Role != RoleFalsifier || cur.Assignment == nil || cur.Assignment.Operations != 2 {
		t.Fatalf("status shows %+v (%v)", cur, err)
	}
}

// TestRoute: the repair scientist goes to the first falsified leaf, else
// the falsifier to the first open scientific claim; frontier's researcher
// always owns root.
func TestRoute(t *testing.T) {
	p := func(s string) *string { return &s }
	root := Claim{ID: RootClaim, Kind: KindScientific, Relation: RelRoot}
	inst := Claim{ID: "claim_i", Kind: KindInstrument, Relation: RelInstrumentOf, Parent: p(RootClaim), Status: "open", OpSeq: 2}
	rep := Claim{ID: "claim_r", Kind: KindScientific, Relation: RelRepairs, Parent: p(RootClaim), Status: "open", OpSeq: 5}
	cases := []struct {
		name   string
		mode   string
		claims []Claim
		role   Role
		claim  string
	}{
		{"open root", "structured", []Claim{with(root, "open"), inst}, RoleFalsifier, RootClaim},
		{"falsified leaf", "structured", []Claim{with(root, "falsified"), inst}, RoleRepairScientist, RootClaim},
		{"repair open", "structured", []Claim{with(root, "falsified"), with(rep, "open")}, RoleFalsifier, "claim_r"},
		{"repair falsified", "structured", []Claim{with(root, "falsified"), with(rep, "falsified")}, RoleRepairScientist, "claim_r"},
		{"done", "structured", []Claim{with(root, "falsified"), with(rep, "supported")}, "", ""},
		{"unresolved", "structured", []Claim{with(root, "unresolved")}, "", ""},
		{"frontier", "frontier", []Claim{with(root, "falsified"), with(rep, "open")}, RoleResearcher, RootClaim},
	}
	for _, tc := range cases {
		role, claim, ok := route(tc.mode, tc.claims)
		if role != tc.role || claim != tc.claim || ok != (tc.role != "") {
			t.Errorf("%s: routed %s on %s (%v), want %s on %s", tc.name, role, claim, ok, tc.role, tc.claim)
		}
	}
}

func with(c Claim, status string) Claim { c.Status = status; return c }

// TestScientificCompleted: only a leaf supported under the version an
// accepted adjudication judged completes, with no scientific claim open.
func TestScientificCompleted(t *testing.T) {
	p := func(s string) *string { return &s }
	root := Claim{ID: RootClaim, Kind: KindScientific, Relation: RelRoot, Status: "falsified", DecisiveVersion: 1}
	rep := Claim{ID: "claim_r", Kind: KindScientific, Relation: RelRepairs, Parent: p(RootClaim), Status: "supported", DecisiveVersion: 2}
	ok := Review{Stage: StageSupport, Claim: "claim_r", ContractVersion: 2, Status: "resolved", Verdict: &Verdict{Decision: DecisionSufficient}}
	old := ok
	old.ContractVersion = 1
	open := Claim{ID: "claim_o", Kind: KindScientific, Relation: RelRefines, Parent: p("claim_r"), Status: "open"}
	inst := Claim{ID: "claim_i", Kind: KindInstrument, Relation: RelInstrumentOf, Parent: p("claim_r"), Status: "open"}
	cases := []struct {
		name    string
		claims  []Claim
		reviews []Review
		want    bool
	}{
		{"accepted leaf", []Claim{root, rep, inst}, []Review{ok}, true},
		{"no adjudication", []Claim{root, rep}, nil, false},
		{"another version", []Claim{root, rep}, []Review{old}, false},
		{"an open scientific claim", []Claim{root, rep, open}, []Review{ok}, false},
		{"root falsified only", []Claim{root}, nil, false},
	}
	for _, tc := range cases {
		if got := ScientificCompleted(tc.claims, tc.reviews); got != tc.want {
			t.Errorf("%s: completed %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestParseScienceVerdict: the strict schemas of section 12; a verdict for
// another claim or version, a wrong decision word, gaps on an approval or
// none on a refusal, and unknown fields are all rejected.
func TestParseScienceVerdict(t *testing.T) {
	contract := Review{Claim: "claim_a", Stage: StageContract, ContractVersion: 2}
	support := Review{Claim: "claim_a", Stage: StageSupport, ContractVersion: 2}
	v := func(claim string, version int, decision, gaps string) string {
		return fmt.Sprintf(`{"claim_id":%q,"contract_version":%d,"decision":%q,"rationale":"long enough to count here","evidence_gaps":%s,"next_test":null}`,
			claim, version, decision, gaps)
	}
	cases := []struct {
		name, line string
		r          Review
		want       string // "" accepted
	}{
		{"approved", v("claim_a", 2, "approved", "[]"), contract, ""},
		{"fenced sufficient", "```json" + v("claim_a", 2, "sufficient", "[]") + "```", support, ""},
		{"insufficient with a gap", v("claim_a", 2, "insufficient", `["no challenge"]`), support, ""},
		{"another claim", v("root", 2, "sufficient", "[]"), support, "verdict is for root version 2"},
		{"another version", v("claim_a", 1, "sufficient", "[]"), support, "verdict is for claim_a version 1"},
		{"a contract word for support", v("claim_a", 2, "approved", "[]"), support, "is not sufficient or insufficient"},
		{"insufficient without gaps", v("claim_a", 2, "insufficient", "[]"), support, "must name evidence gaps"},
		{"approval with gaps", v("claim_a", 2, "approved", `["x"]`), contract, "cannot keep evidence gaps"},
		{"unknown field", strings.Replace(v("claim_a", 2, "approved", "[]"), `"next_test"`, `"disposition":"supported","next_test"`, 1), contract, "unknown field"},
		{"short rationale", strings.Replace(v("claim_a", 2, "approved", "[]"), "long enough to count here", "short", 1), contract, "shorter than 16"},
	}
	for _, tc := range cases {
		_, err := ParseScienceVerdict(tc.line, tc.r)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestHandoffLeavesOnlyReads: after its handoff an assignment's role stays
// the caller's (no operator's rights in the rest of the turn), with reads only.
func TestHandoffLeavesOnlyReads(t *testing.T) {
	_, s, lab := newScientificStudy(t, "structured")
	startAssignment(t, lab, RoleFalsifier, RootClaim)
	mustCall[Assignment](t, lab, "handoff", `{"outcome":"inconclusive","next_test":"later"}`)
	wantRefused(t, s, "has handed off (inconclusive); only reads remain", func() error {
		_, err := call[ContractResult](t, lab, "contract", contractArgs("root", ""))
		return err
	})
	wantRefused(t, s, "has handed off", func() error {
		_, err := call[Receipt](t, lab, "run", `{"source":"orbit.py","outputs":["r.json"],"stage":"workbench"}`)
		return err
	})
	wantRefused(t, s, "no assignment is active", func() error { _, err := call[Assignment](t, lab, "handoff", `{"outcome":"blocked"}`); return err })
	if sum := mustCall[StatusSummary](t, lab, "status", `{}`); sum.Role != RoleFalsifier {
		t.Errorf("role after the handoff %s, want the falsifier's", sum.Role)
	}
}
