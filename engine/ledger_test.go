package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// newScientificStudy creates a study in mode (structured or frontier)
// through the test-only path: study creation still refuses those modes.
func newScientificStudy(t testing.TB, mode string) (Campaign, *store.Store, *Lab) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"h.txt": "every planet's orbit obeys Kepler's third law", "i.txt": "check it", "agent.sh": "#!/bin/sh\nexit 0\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	req := Request{HypothesisFile: filepath.Join(dir, "h.txt"), InstructionsFile: filepath.Join(dir, "i.txt"), Mode: "minimal",
		AgentBackend: "command", Executable: filepath.Join(dir, "agent.sh"), ExecutionBackend: "bubblewrap",
		CompletionPolicy: "repair", WallSeconds: 600, TurnSeconds: 60}
	ctx := context.Background()
	c := Campaign{Dir: filepath.Join(dir, "campaign")}
	ns, err := newContract(ctx, c, req, fakeProbe)
	if err != nil {
		t.Fatal(err)
	}
	ns.k.Mode = mode
	lock, err := createLocked(ctx, c, ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	s, err := c.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	writeResearch(t, c, "orbit.py", "print(1)\n", 0o644)
	return c, s, &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
}

// call runs a lab call and decodes its result into T.
func call[T any](t testing.TB, lab *Lab, name, args string) (T, error) {
	t.Helper()
	var out T
	got, err := lab.Call(context.Background(), name, []byte(args))
	if err != nil {
		return out, err
	}
	b, _ := json.Marshal(got)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

func mustCall[T any](t testing.TB, lab *Lab, name, args string) T {
	t.Helper()
	out, err := call[T](t, lab, name, args)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return out
}

// finishRun plays the executor: it writes the run's outputs and records
// the receipt as finished with their hashes.
func finishRun(t testing.TB, lab *Lab, id string, status ExpStatus, outputs map[string]string) {
	t.Helper()
	err := lab.S.Tx(context.Background(), func(tx *store.Tx) error {
		r, err := getReceipt(tx, id)
		if err != nil {
			return err
		}
		for rel, body := range outputs {
			p := filepath.Join(lab.C.ArtifactDir(id), rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return err
			}
			r.Artifacts[rel] = sandbox.Artifact{SHA256: docHash([]byte(body)), Bytes: int64(len(body))}
		}
		now := time.Now().UTC()
		r.Status, r.FinishedAt = status, &now
		_, err = putReceipt(tx, r)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// approveContract records a contract review's approval of the claim's latest
// contract as it is now, as the review the next step builds will.
func approveContract(t testing.TB, lab *Lab, claim string, decision ApprovalDecision) {
	t.Helper()
	err := lab.S.Tx(context.Background(), func(tx *store.Tx) error {
		c, err := getClaim(tx, claim)
		if err != nil {
			return err
		}
		k, err := lab.studyContract(tx)
		if err != nil {
			return err
		}
		p, err := lab.contractPacket(tx, k, c)
		if err != nil {
			return err
		}
		return putApproval(tx, Approval{PacketSHA256: p.PacketSHA256(), Claim: claim, ContractVersion: p.Contract.Version,
			Decision: decision, Reviewer: "test", CreatedAt: time.Now().UTC()})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func eventHead(t testing.TB, s *store.Store) int64 {
	t.Helper()
	seq, err := s.LastSeq(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// wantRefused checks a one-line lab error containing want that changed nothing.
func wantRefused(t testing.TB, s *store.Store, want string, do func() error) {
	t.Helper()
	before := eventHead(t, s)
	err := do()
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrLab) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want a one-line lab error containing %q, got %v", want, err)
	}
	if again := do(); again == nil || again.Error() != err.Error() {
		t.Fatalf("the same request gave %v, then %v", err, again)
	}
	if after := eventHead(t, s); after != before {
		t.Fatalf("a refused call appended events (%d → %d)", before, after)
	}
}

const decisionContract = `"observable":"orbital period against semi-major axis","expected_outcomes":"T^2/a^3 constant within 1e-6",
"decision_rule":"falsified if any ratio differs by more than 1e-6","required_observation":"ratios for every planet",
"uncertainty_criterion":"integrator error below 1e-9","inconclusive_conditions":"the integrator does not converge"`

func contractArgs(claim, extra string) string {
	return `{"claim":"` + claim + `",` + decisionContract + `,"checks":[{"output":"r.json","path":"$.planets[0].ok","equals":true}]` + extra + `}`
}

func TestLedgerCallsRefusedInMinimal(t *testing.T) {
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	cases := []struct{ call, args, want string }{
		{"claim", `{"statement":"a longer claim","kind":"scientific","relation":"refines","rationale":"because of it"}`, "lab claim is not a call of the worker"},
		{"contract", contractArgs("root", ""), "lab contract is not a call of the worker"},
		{"link", `{"claim":"root","experiment":"exp_x","output":"o","sufficient":true}`, "lab link is not a call of the worker"},
		{"close", `{"claim":"root","status":"weakened","reason":"for a reason"}`, "lab close is not a call of the worker"},
		{"run", `{"source":"sim.py","outputs":["o"],"claim":"root"}`, "claim is only in structured and frontier modes"},
		{"run", `{"source":"sim.py","outputs":["o"],"stage":"workbench"}`, "workbench is only in structured and frontier modes"},
	}
	for _, tc := range cases {
		t.Run(tc.call, func(t *testing.T) {
			wantRefused(t, s, tc.want, func() error { _, err := lab.Call(context.Background(), tc.call, []byte(tc.args)); return err })
		})
	}
	snap, err := LoadSnapshot(context.Background(), c, s)
	if err != nil || len(snap.Claims) != 1 || snap.Claims[0].Kind != "" || len(snap.Experiments) != 0 {
		t.Fatalf("minimal study changed: %+v %v", snap.Claims, err)
	}
}

func TestClaimRules(t *testing.T) {
	_, s, lab := newScientificStudy(t, "structured")
	inst := mustCall[Claim](t, lab, "claim", `{"statement":"the integrator conserves energy","kind":"instrument","relation":"instrument_of","rationale":"trust the tool first"}`)
	if inst.Status != "open" || *inst.Parent != RootClaim || !strings.HasPrefix(inst.ID, "claim_") {
		t.Fatalf("claim gave %+v", inst)
	}
	if again := mustCall[Claim](t, lab, "claim", `{"statement":"the integrator conserves energy","kind":"instrument","relation":"instrument_of","rationale":"trust the tool first"}`); again.ID != inst.ID {
		t.Fatalf("the same claim twice gave %s and %s", inst.ID, again.ID)
	}
	weak := mustCall[Claim](t, lab, "claim", `{"statement":"a weaker scientific claim","kind":"scientific","relation":"refines","rationale":"narrow the scope"}`)
	mustCall[Claim](t, lab, "close", `{"claim":"`+weak.ID+`","status":"weakened","reason":"it says too little"}`)
	repair := `"repair":{"counterexamples":["exp_x"],"accommodation":"accommodates it","semantic_change":"narrower scope","falsification_condition":"any ratio off"}`
	cases := []struct{ name, args, want string }{
		{"short statement", `{"statement":"short","kind":"scientific","relation":"refines","rationale":"long enough"}`, "statement must be at least 8"},
		{"short rationale", `{"statement":"long enough here","kind":"scientific","relation":"refines","rationale":"no"}`, "rationale must be at least 8"},
		{"unknown kind", `{"statement":"long enough here","kind":"wish","relation":"refines","rationale":"long enough"}`, "kind must be one of scientific"},
		{"root relation", `{"statement":"long enough here","kind":"scientific","relation":"root","rationale":"long enough"}`, "relation must be one of repairs"},
		{"kind against relation", `{"statement":"long enough here","kind":"control","relation":"instrument_of","rationale":"long enough"}`, "relation instrument_of needs kind instrument"},
		{"non-scientific parent", `{"statement":"long enough here","kind":"diagnostic","relation":"diagnostic_of","parent":"` + inst.ID + `","rationale":"long enough"}`, "needs a scientific parent"},
		{"scientific under instrument", `{"statement":"long enough here","kind":"scientific","relation":"alternate","parent":"` + inst.ID + `","rationale":"long enough"}`, "needs a scientific parent"},
		{"repair record elsewhere", `{"statement":"long enough here","kind":"scientific","relation":"refines","rationale":"long enough",` + repair + `}`, "only with it"},
		{"repair without record", `{"statement":"long enough here","kind":"scientific","relation":"repairs","rationale":"long enough"}`, "goes with relation repairs"},
		{"repair of an open claim", `{"statement":"long enough here","kind":"scientific","relation":"repairs","rationale":"long enough",` + repair + `}`, "only a falsified claim can be repaired"},
		{"repair without counterexamples", `{"statement":"long enough here","kind":"scientific","relation":"repairs","rationale":"long enough","repair":{"counterexamples":[],"accommodation":"accommodates it","semantic_change":"narrower scope","falsification_condition":"any ratio off"}}`, "at least one counterexample"},
		{"short repair field", `{"statement":"long enough here","kind":"scientific","relation":"repairs","rationale":"long enough","repair":{"counterexamples":["e"],"accommodation":"x","semantic_change":"narrower scope","falsification_condition":"any ratio off"}}`, "repair.accommodation"},
		{"succeeds an open claim", `{"statement":"long enough here","kind":"instrument","relation":"succeeds","parent":"` + inst.ID + `","rationale":"long enough"}`, "needs a closed predecessor"},
		{"succeeds with another kind", `{"statement":"long enough here","kind":"control","relation":"succeeds","parent":"` + weak.ID + `","rationale":"long enough"}`, "predecessor's kind (scientific)"},
		{"unknown parent", `{"statement":"long enough here","kind":"scientific","relation":"refines","parent":"claim_nope","rationale":"long enough"}`, "no claim claim_nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, s, tc.want, func() error { _, err := call[Claim](t, lab, "claim", tc.args); return err })
		})
	}
	succ := mustCall[Claim](t, lab, "claim", `{"statement":"the successor of the weak claim","kind":"scientific","relation":"succeeds","parent":"`+weak.ID+`","rationale":"after it closed"}`)
	if succ.Relation != RelSucceeds || succ.Kind != KindScientific {
		t.Fatalf("successor %+v", succ)
	}
}

func TestContractRules(t *testing.T) {
	_, s, lab := newScientificStudy(t, "frontier")
	cases := []struct{ name, args, want string }{
		{"short field", `{"claim":"root","observable":"x","expected_outcomes":"long enough","decision_rule":"long enough","required_observation":"long enough","uncertainty_criterion":"long enough","inconclusive_conditions":"long enough","checks":[{"output":"r.json","path":"a","equals":1}]}`, "observable must be at least 8"},
		{"no checks", `{"claim":"root",` + decisionContract + `}`, "at least one check"},
		{"wildcard path", `{"claim":"root",` + decisionContract + `,"checks":[{"output":"r.json","path":"a[*]","equals":1}]}`, "not a non-negative index"},
		{"non-scalar equals", `{"claim":"root",` + decisionContract + `,"checks":[{"output":"r.json","path":"a","equals":[1]}]}`, "must be a string, number, boolean or null"},
		{"output outside", `{"claim":"root",` + decisionContract + `,"checks":[{"output":"../r.json","path":"a","equals":1}]}`, "leaves its folder"},
		{"bad purpose", contractArgs("root", `,"purpose":"vibes"`), "one of decision, terminal_record"},
		{"missing bound source", contractArgs("root", `,"binding":{"source":"nope.py"}`), "does not exist"},
		{"repeated argument list", contractArgs("root", `,"binding":{"source":"orbit.py","args":[["1"],["1"]]}`), "repeats an earlier argument list"},
		{"terminal record without an attempt", contractArgs("root", `,"purpose":"terminal_record"`), "needs a real attempt first"},
		{"unknown claim", contractArgs("claim_nope", ""), "no claim claim_nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, s, tc.want, func() error { _, err := call[ContractResult](t, lab, "contract", tc.args); return err })
		})
	}
	first := mustCall[ContractResult](t, lab, "contract", contractArgs("root", ""))
	same := mustCall[ContractResult](t, lab, "contract", contractArgs("root", ""))
	second := mustCall[ContractResult](t, lab, "contract", contractArgs("root", `,"binding":{"source":"orbit.py","args":[["--planets","8"]]}`))
	if first.Version != 1 || same.Version != 1 || second.Version != 2 {
		t.Fatalf("versions %d, %d, %d; want 1, 1 (the same design), 2", first.Version, same.Version, second.Version)
	}
	var root Claim
	_ = s.Read(context.Background(), func(tx *store.Tx) error { root, _ = getClaim(tx, RootClaim); return nil })
	if len(root.Contracts) != 2 || root.Contracts[0].Checks[0].Path != "$.planets.0.ok" || root.Contracts[1].Binding.Source != "orbit.py" {
		t.Fatalf("root's contracts: %+v", root.Contracts)
	}
}
