package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// sciAgent plays every role of a scientific study in process, deciding
// each step from the ledger as the lab shows it: contract, contract
// review, evidence run, link, falsification, repair with its
// counterexamples, support request; as reviewer it approves the design,
// as judge it finds the evidence sufficient.
type sciAgent struct {
	t   *testing.T
	lab *Lab // no role of its own: the host's assignment decides

	mu      sync.Mutex
	turns   []provider.Turn
	judged  int
	onJudge func(n int) bool // called before the n-th judge answers; true: it hangs until stopped
	toolUse int              // the first judge's stream reports this many tool events
}

func (a *sciAgent) Name() string { return "sci" }

func (a *sciAgent) RunTurn(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
	a.mu.Lock()
	a.turns = append(a.turns, t)
	a.mu.Unlock()
	var p sciencePacket
	switch t.Role {
	case provider.RoleReviewer, provider.RoleJudge:
		if err := json.Unmarshal([]byte(t.Prompt), &p); err != nil {
			return provider.Outcome{}, err
		}
	}
	switch t.Role {
	case provider.RoleReviewer:
		return provider.Outcome{LastLine: verdictFor(p, "approved")}, nil
	case provider.RoleJudge:
		a.mu.Lock()
		a.judged++
		n := a.judged
		a.mu.Unlock()
		if a.onJudge != nil && a.onJudge(n) {
			<-ctx.Done()
			return provider.Outcome{ExitCode: 143}, nil
		}
		out := provider.Outcome{LastLine: verdictFor(p, DecisionSufficient)}
		if n == 1 {
			out.ToolCalls = a.toolUse
		}
		return out, nil
	}
	a.work(ctx, Role(t.Env["SIMJECTURE_ROLE"]), t.Env["SIMJECTURE_CLAIM"])
	return provider.Outcome{Cursor: "thread-" + t.Env["SIMJECTURE_ROLE"] + "-" + t.Env["SIMJECTURE_CLAIM"]}, nil
}

func verdictFor(p sciencePacket, decision string) string {
	return fmt.Sprintf(`{"claim_id":%q,"contract_version":%d,"decision":%q,"rationale":"the contract's checks decide the claim","evidence_gaps":[],"next_test":null}`,
		p.Contract.Claim, p.Contract.Contract.Version, decision)
}

func (a *sciAgent) call(ctx context.Context, name, args string) any {
	got, err := a.lab.Call(ctx, name, []byte(args))
	if err != nil {
		a.t.Errorf("lab %s %s: %v", name, args, err)
	}
	return got
}

// work takes the steps of role on claim the ledger allows now.
func (a *sciAgent) work(ctx context.Context, role Role, claim string) {
	snap, err := LoadSnapshot(ctx, a.lab.C, a.lab.S)
	if err != nil {
		a.t.Error(err)
		return
	}
	if role == RoleResearcher { // the researcher takes the structured route itself
		var ok bool
		if role, claim, ok = route("structured", snap.Claims); !ok {
			return
		}
	}
	switch role {
	case RoleRepairScientist:
		a.repair(ctx, snap, claim)
	case RoleFalsifier:
		a.falsify(ctx, snap, claim)
	}
}

const sciContract = `"observable":"the orbit's measured value","expected_outcomes":"value is one when the law fails",` +
	`"decision_rule":"the check decides it","required_observation":"one evidence run of sim.py",` +
	`"uncertainty_criterion":"exact integer output","inconclusive_conditions":"the run fails or writes nothing",` +
	`"checks":[{"output":"r.json","path":"$.value","equals":1}]`

func (a *sciAgent) falsify(ctx context.Context, snap Snapshot, claim string) {
	c := claimIn(snap, claim)
	if len(c.Contracts) == 0 {
		a.call(ctx, "contract", `{"claim":"`+claim+`",`+sciContract+`}`)
		a.call(ctx, "review", `{"stage":"contract","claim":"`+claim+`"}`)
		return
	}
	if !slices.Contains(snap.Contracts, ClaimContract{Claim: claim, Version: len(c.Contracts), State: ContractApproved}) {
		return // wait for the contract review
	}
	i := slices.IndexFunc(snap.Experiments, func(r Receipt) bool { return r.Claim == claim && r.Stage == "evidence" })
	if i < 0 {
		a.call(ctx, "run", `{"source":"sim.py","outputs":["r.json"],"claim":"`+claim+`"}`)
		return
	}
	r := snap.Experiments[i]
	if !r.Finished() {
		return
	}
	if len(c.Links) == 0 {
		a.call(ctx, "link", fmt.Sprintf(`{"claim":%q,"experiment":%q,"output":"r.json","sufficient":true}`, claim, r.ID))
	}
	if claim == RootClaim {
		a.call(ctx, "close", `{"claim":"root","status":"falsified","reason":"the check passed on a fresh run"}`)
		if snap.Role == RoleFalsifier {
			a.call(ctx, "handoff", fmt.Sprintf(`{"outcome":"falsified","experiments":[%q],"next_test":"repair it"}`, r.ID))
		}
		return
	}
	if !slices.ContainsFunc(snap.Reviews, func(v Review) bool { return v.Stage == StageSupport && v.Claim == claim }) {
		a.call(ctx, "review", `{"stage":"support","claim":"`+claim+`","case":"the contracted check passed on a fresh evidence run"}`)
	}
}

func (a *sciAgent) repair(ctx context.Context, snap Snapshot, claim string) {
	parent := claimIn(snap, claim)
	var exp string
	for _, k := range parent.Links {
		if k.Counts && k.ContractVersion == parent.DecisiveVersion {
			exp = k.Experiment
		}
	}
	child := a.call(ctx, "claim", repairArgs(exp))
	id := child.(Claim).ID
	a.call(ctx, "contract", `{"claim":"`+id+`",`+sciContract+`}`)
	a.call(ctx, "review", `{"stage":"contract","claim":"`+id+`"}`)
	if snap.Role == RoleRepairScientist {
		a.call(ctx, "handoff", `{"outcome":"registered","next_test":"test the repair"}`)
	}
}

func claimIn(snap Snapshot, id string) Claim {
	i := slices.IndexFunc(snap.Claims, func(c Claim) bool { return c.ID == id })
	if i < 0 {
		return Claim{ID: id}
	}
	return snap.Claims[i]
}

func scienceStudy(t *testing.T, mode string) (Campaign, *store.Store, *sciAgent) {
	c, s, _ := newScientificStudy(t, mode)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	return c, s, &sciAgent{t: t, lab: &Lab{C: c, S: s, Cores: 2, MemMB: 8192}}
}

// TestStructuredStudyCompletes: the host routes falsifier → repair
// scientist → falsifier of the repair; each assignment starts a fresh
// session; reviews run after the turns; the judge's turn is tool-free; the
// study completes only on the accepted adjudication.
func TestStructuredStudyCompletes(t *testing.T) {
	c, s, agent := scienceStudy(t, "structured")
	final, _ := runSupervisor(t, c, agent, Options{})
	snap, err := LoadSnapshot(context.Background(), c, s)
	if err != nil {
		t.Fatal(err)
	}
	if final != StatusCompleted {
		t.Fatalf("final %s: %s", final, snap.LastError)
	}
	var routed []string
	for _, a := range snap.Assignments {
		outcome := ""
		if a.Handoff != nil {
			outcome = a.Handoff.Outcome
		}
		routed = append(routed, fmt.Sprintf("%s:%v:%s", a.Role, a.Claim == RootClaim, outcome))
	}
	want := []string{"falsifier:true:falsified", "repair_scientist:true:registered", "falsifier:false:"}
	if fmt.Sprint(routed) != fmt.Sprint(want) {
		t.Errorf("assignments %v, want %v", routed, want)
	}
	checkSessions(t, agent.turns, false)
	checkJudgeTurns(t, agent.turns, 1)
	if n := countEvents(t, s, string(EvContractReviewed)); n != 2 {
		t.Errorf("%d contract reviews, want 2", n)
	}
	var turns []string
	for _, tu := range agent.turns {
		if r := tu.Env["SIMJECTURE_ROLE"]; r != "" && tu.Role == provider.RoleWorker {
			turns = append(turns, r)
		}
	}
	if started := turnRoles(t, s); !slices.Equal(started, turns) {
		t.Errorf("turn_started roles %v, want the roles the turns ran as %v", started, turns)
	}
}

// turnRoles is the role of every turn_started event, in order.
func turnRoles(t *testing.T, s *store.Store) []string {
	t.Helper()
	var roles []string
	err := s.Read(context.Background(), func(tx *store.Tx) error {
		evs, err := tx.EventsAfter(0, 100000)
		for _, ev := range evs {
			var p TurnStartedPayload
			if ev.Type == string(EvTurnStarted) && json.Unmarshal(ev.Payload, &p) == nil {
				roles = append(roles, p.Role)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return roles
}

// TestFrontierStudyCompletes: one researcher, one session resumed across
// every turn, the same gates and the same completion.
func TestFrontierStudyCompletes(t *testing.T) {
	c, s, agent := scienceStudy(t, "frontier")
	final, _ := runSupervisor(t, c, agent, Options{})
	if final != StatusCompleted {
		t.Fatalf("final %s", final)
	}
	snap, _ := LoadSnapshot(context.Background(), c, s)
	if len(snap.Assignments) != 1 || snap.Assignments[0].Role != RoleResearcher || snap.Assignments[0].Claim != RootClaim {
		t.Errorf("assignments %+v, want one researcher on root", snap.Assignments)
	}
	checkSessions(t, agent.turns, true)
	checkJudgeTurns(t, agent.turns, 1)
}

// checkSessions: a worker turn resumes only its own assignment's session
// (structured: a new assignment starts fresh) or frontier's one session.
func checkSessions(t *testing.T, turns []provider.Turn, shared bool) {
	t.Helper()
	seen := map[string]bool{}
	workers := 0
	for _, tr := range turns {
		if tr.Role != provider.RoleWorker {
			continue
		}
		workers++
		own := "thread-" + tr.Env["SIMJECTURE_ROLE"] + "-" + tr.Env["SIMJECTURE_CLAIM"]
		switch {
		case shared && workers > 1 && tr.Cursor != own:
			t.Errorf("frontier turn %d resumed %q, want %q", tr.Number, tr.Cursor, own)
		case !shared && tr.Cursor != "" && (tr.Cursor != own || !seen[own]):
			t.Errorf("turn %d resumed %q, not its own assignment's session", tr.Number, tr.Cursor)
		case !shared && tr.Cursor == "" && seen[own] && own != "thread-falsifier-root":
			t.Errorf("turn %d of a running assignment started a fresh session", tr.Number)
		}
		seen[own] = true
	}
}

func checkJudgeTurns(t *testing.T, turns []provider.Turn, want int) {
	t.Helper()
	n := 0
	for _, tr := range turns {
		if tr.Role != provider.RoleJudge {
			continue
		}
		n++
		if tr.Tools != nil || tr.CallTool != nil || tr.MCPCommand != nil || tr.Study != "" || tr.Env["SIMJECTURE_STUDY"] != "" || tr.Env["SIMJECTURE_ROLE"] != "judge" {
			t.Errorf("the judge's turn has a tool: %+v", tr)
		}
	}
	if n != want {
		t.Errorf("%d judge turns, want %d", n, want)
	}
}

// TestSupportReviewSurvivesAStop: a supervisor stopped while the judge
// runs leaves the request queued; the next supervisor judges it once and
// records one adjudication.
func TestSupportReviewSurvivesAStop(t *testing.T) {
	c, s, agent := scienceStudy(t, "structured")
	agent.onJudge = func(n int) bool {
		if err := setControl(context.Background(), c, s, Pause, ""); err != nil { // stopped between the request and its verdict
			t.Error(err)
		}
		return n == 1
	}
	if final, _ := runSupervisor(t, c, agent, Options{}); final != StatusPaused {
		t.Fatalf("first run ended %s, want paused", final)
	}
	if n := countEvents(t, s, string(EvAdjudicated)); n != 0 {
		t.Fatalf("%d adjudications recorded by the stopped supervisor", n)
	}
	agent.onJudge = nil
	final, _ := runSupervisor(t, c, agent, Options{})
	if final != StatusCompleted || agent.judged != 2 {
		t.Fatalf("final %s after %d judge turns", final, agent.judged)
	}
	if n := countEvents(t, s, string(EvAdjudicated)); n != 1 {
		t.Errorf("%d adjudications, want exactly 1", n)
	}
	if n := countEvents(t, s, string(EvReviewRequested)); n != 3 {
		t.Errorf("%d review requests, want 3 (two contract reviews, one support)", n)
	}
}

// TestJudgeToolUseVoidsTheVerdict: a judge whose stream reports a tool
// call has its (sufficient) verdict rejected; the second, tool-free attempt
// decides.
func TestJudgeToolUseVoidsTheVerdict(t *testing.T) {
	c, s, agent := scienceStudy(t, "structured")
	agent.toolUse = 1
	if final, _ := runSupervisor(t, c, agent, Options{}); final != StatusCompleted {
		t.Fatalf("final %s", final)
	}
	snap, _ := LoadSnapshot(context.Background(), c, s)
	for _, r := range snap.Reviews {
		if r.Stage == StageSupport && (r.Attempts != 2 || !strings.Contains(r.LastError, "used 1 tool")) {
			t.Errorf("support review: %d attempts, last error %q", r.Attempts, r.LastError)
		}
	}
	if agent.judged != 2 || countEvents(t, s, string(EvAdjudicated)) != 1 {
		t.Errorf("%d judge turns, %d adjudications; want 2 and 1", agent.judged, countEvents(t, s, string(EvAdjudicated)))
	}
}

// TestIdleWatch: frontier's inactivity watchdog expires only after its
// span passes with no new event, and any event restarts the span.
func TestIdleWatch(t *testing.T) {
	_, s, lab := newScientificStudy(t, "frontier")
	w := newIdleWatch(s, 200*time.Millisecond)
	ctx := context.Background()
	if w.expired(ctx) {
		t.Fatal("expired at once")
	}
	tick, deadline := time.NewTicker(10*time.Millisecond), time.After(10*time.Second)
	defer tick.Stop()
	for !w.expired(ctx) {
		select {
		case <-deadline:
			t.Fatal("never expired without activity")
		case <-tick.C:
		}
	}
	mustCall[ContractResult](t, lab, "contract", contractArgs("root", "")) // activity: a new event
	if w.expired(ctx) {
		t.Fatal("expired right after activity")
	}
	if (&idleWatch{}).expired(ctx) {
		t.Fatal("a watch without a span expired")
	}
}
