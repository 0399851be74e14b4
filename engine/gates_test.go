package engine

import (
	"fmt"
	"strings"
	"testing"
)

const goodResult = `{"planets":[{"ok":true}]}`

func evidenceRun(claim, key string) string {
	return fmt.Sprintf(`{"source":"orbit.py","outputs":["r.json"],"claim":%q,"key":%q}`, claim, key)
}

// TestEvidenceRunGate: an evidence run on a contracted claim needs the
// latest version approved as it is now; a workbench run needs nothing.
func TestEvidenceRunGate(t *testing.T) {
	c, s, lab := newScientificStudy(t, "structured")
	wantRefused(t, s, "names the claim it serves", func() error {
		_, err := call[Receipt](t, lab, "run", `{"source":"orbit.py","outputs":["r.json"]}`)
		return err
	})
	early := mustCall[Receipt](t, lab, "run", evidenceRun("root", "early")) // no contract yet: allowed, never counts
	mustCall[ContractResult](t, lab, "contract", contractArgs("root", `,"binding":{"source":"orbit.py"}`))
	wantRefused(t, s, "is not approved by a contract review", func() error { _, err := call[Receipt](t, lab, "run", evidenceRun("root", "a")); return err })
	wb := mustCall[Receipt](t, lab, "run", `{"source":"orbit.py","outputs":["r.json"],"stage":"workbench","claim":"root"}`)
	approveContract(t, lab, RootClaim, DecisionApproved)
	ok := mustCall[Receipt](t, lab, "run", evidenceRun("root", "a"))
	if ok.Claim != RootClaim || ok.OpSeq <= early.OpSeq || wb.Stage != "workbench" {
		t.Fatalf("receipts %+v / %+v", ok, wb)
	}
	writeResearch(t, c, "orbit.py", "print(2)\n", 0o644) // a changed bound source voids the approval
	wantRefused(t, s, "is not approved by a contract review", func() error { _, err := call[Receipt](t, lab, "run", evidenceRun("root", "b")); return err })
	writeResearch(t, c, "orbit.py", "print(1)\n", 0o644)
	mustCall[Receipt](t, lab, "run", evidenceRun("root", "b"))
	mustCall[ContractResult](t, lab, "contract", contractArgs("root", "")) // a new version voids it too
	wantRefused(t, s, "contract version 2 of root is not approved", func() error { _, err := call[Receipt](t, lab, "run", evidenceRun("root", "c")); return err })
}

func TestRejectedContractReviewBlocks(t *testing.T) {
	_, s, lab := newScientificStudy(t, "frontier")
	mustCall[ContractResult](t, lab, "contract", contractArgs("root", ""))
	approveContract(t, lab, RootClaim, DecisionNeedsRevision)
	wantRefused(t, s, "was judged needs_revision", func() error { _, err := call[Receipt](t, lab, "run", evidenceRun("root", "a")); return err })
}

// TestLinkCountsOnlyQualifyingRuns: each way a link can fail to count,
// with its reason; the one qualifying link counts.
func TestLinkCountsOnlyQualifyingRuns(t *testing.T) {
	c, _, lab := newScientificStudy(t, "structured")
	writeResearch(t, c, "other.py", "print(3)\n", 0o644)
	before := mustCall[Receipt](t, lab, "run", evidenceRun("root", "before"))
	mustCall[ContractResult](t, lab, "contract", contractArgs("root", `,"binding":{"source":"orbit.py","args":[[]]}`))
	approveContract(t, lab, RootClaim, DecisionApproved)
	runs := map[string]Receipt{
		"before":    before,
		"good":      mustCall[Receipt](t, lab, "run", evidenceRun("root", "good")),
		"failed":    mustCall[Receipt](t, lab, "run", evidenceRun("root", "failed")),
		"mismatch":  mustCall[Receipt](t, lab, "run", evidenceRun("root", "mismatch")),
		"tampered":  mustCall[Receipt](t, lab, "run", evidenceRun("root", "tampered")),
		"workbench": mustCall[Receipt](t, lab, "run", `{"source":"orbit.py","outputs":["r.json"],"stage":"workbench","claim":"root"}`),
		"unbound":   mustCall[Receipt](t, lab, "run", `{"source":"other.py","outputs":["r.json"],"claim":"root"}`),
		"otherargs": mustCall[Receipt](t, lab, "run", `{"source":"orbit.py","args":["--fast"],"outputs":["r.json"],"claim":"root"}`),
		"modified":  mustCall[Receipt](t, lab, "run", evidenceRun("root", "modified")),
	}
	for name, r := range runs {
		body, status := goodResult, ExpSucceeded
		switch name {
		case "failed":
			status = ExpFailed
		case "mismatch":
			body = `{"planets":[{"ok":1}]}`
		case "modified":
			body = `{"planets":[]}`
		}
		finishRun(t, lab, r.ID, status, map[string]string{"r.json": body})
	}
	writeResearch(t, c, "../experiments/"+runs["tampered"].ID+"/r.json", `{"planets":[{"ok":true}]} `, 0o644)
	cases := []struct {
		run, sufficient, want string // want "" counts
	}{
		{"good", "true", ""},
		{"good", "false", "not offered as sufficient"},
		{"before", "true", "was queued before contract version 1"},
		{"failed", "true", "did not succeed (failed)"},
		{"mismatch", "true", "found 1, expected true"},
		{"modified", "true", "JSON path $.planets.0.ok is missing"},
		{"tampered", "true", "changed after collection"},
		{"workbench", "true", "is a workbench run, never evidence"},
		{"unbound", "true", "is not the bound program orbit.py"},
		{"otherargs", "true", "is not the bound program orbit.py"},
	}
	for _, tc := range cases {
		t.Run(tc.run+"/"+tc.sufficient, func(t *testing.T) {
			k := mustCall[Link](t, lab, "link", fmt.Sprintf(`{"claim":"root","experiment":%q,"output":"r.json","sufficient":%s}`, runs[tc.run].ID, tc.sufficient))
			reasons := strings.Join(k.Reasons, "; ")
			if tc.want == "" && (!k.Counts || reasons != "") || tc.want != "" && (k.Counts || !strings.Contains(reasons, tc.want)) {
				t.Fatalf("link counts=%v reasons %q; want %q", k.Counts, reasons, tc.want)
			}
			if k.ContractVersion != 1 {
				t.Fatalf("bound to version %d, want the latest (1)", k.ContractVersion)
			}
		})
	}
}

// TestCloseGateAndRepair: falsified needs an approved decision contract
// and a counting link under it; a repair needs its counterexamples.
func TestCloseGateAndRepair(t *testing.T) {
	c, s, lab := newScientificStudy(t, "structured")
	closeRoot := func(args string) func() error {
		return func() error { _, err := call[Claim](t, lab, "close", args); return err }
	}
	const falsify = `{"claim":"root","status":"falsified","reason":"the fifth planet breaks it"}`
	wantRefused(t, s, "supported is never a close", closeRoot(`{"claim":"root","status":"supported","reason":"it looks right"}`))
	wantRefused(t, s, "root has no evidence contract", closeRoot(falsify))
	wantRefused(t, s, "never superseded", closeRoot(`{"claim":"root","status":"superseded","reason":"replaced by another"}`))
	wantRefused(t, s, "reason must be at least 8", closeRoot(`{"claim":"root","status":"weakened","reason":"meh"}`))
	mustCall[ContractResult](t, lab, "contract", contractArgs("root", ""))
	wantRefused(t, s, "weakened is never contract-backed", closeRoot(`{"claim":"root","status":"weakened","reason":"it says too much","contract_version":1}`))
	wantRefused(t, s, "needs a terminal_record contract", closeRoot(`{"claim":"root","status":"unresolved","reason":"cannot tell yet","contract_version":1}`))
	wantRefused(t, s, "needs an approved contract", closeRoot(falsify))
	approveContract(t, lab, RootClaim, DecisionApproved)
	wantRefused(t, s, "needs a sufficient link that counts", closeRoot(falsify))
	run := mustCall[Receipt](t, lab, "run", evidenceRun("root", "x"))
	finishRun(t, lab, run.ID, ExpSucceeded, map[string]string{"r.json": `{"planets":[{"ok":false}]}`})
	if k := mustCall[Link](t, lab, "link", fmt.Sprintf(`{"claim":"root","experiment":%q,"output":"r.json","sufficient":true}`, run.ID)); k.Counts {
		t.Fatalf("a failed check counted: %+v", k)
	}
	wantRefused(t, s, "needs a sufficient link that counts", closeRoot(falsify))
	good := mustCall[Receipt](t, lab, "run", evidenceRun("root", "y"))
	finishRun(t, lab, good.ID, ExpSucceeded, map[string]string{"r.json": goodResult})
	mustCall[Link](t, lab, "link", fmt.Sprintf(`{"claim":"root","experiment":%q,"output":"r.json","sufficient":true}`, good.ID))
	wantRefused(t, s, "version 2 of root is not the latest (1)", closeRoot(`{"claim":"root","status":"falsified","reason":"the fifth planet breaks it","contract_version":2}`))
	writeResearch(t, c, "../experiments/"+good.ID+"/r.json", `{"planets":[{"ok":true}]}`+"\n", 0o644)
	wantRefused(t, s, "needs a sufficient link that counts", closeRoot(falsify)) // re-checked on the re-hashed output
	writeResearch(t, c, "../experiments/"+good.ID+"/r.json", goodResult, 0o644)
	root := mustCall[Claim](t, lab, "close", falsify)
	if root.Status != "falsified" || root.DecisiveVersion != 1 || root.ClosedReason == "" {
		t.Fatalf("closed root %+v", root)
	}
	wantRefused(t, s, "root is already falsified", closeRoot(falsify))
	repair := func(statement, exp string) string {
		return fmt.Sprintf(`{"statement":%q,"kind":"scientific","relation":"repairs","rationale":"the fifth planet misbehaves",
"repair":{"counterexamples":[%q],"accommodation":"excludes perturbed orbits","semantic_change":"restricted to unperturbed orbits","falsification_condition":"an unperturbed orbit off the law"}}`, statement, exp)
	}
	wantRefused(t, s, "must change the statement", func() error {
		_, err := call[Claim](t, lab, "claim", repair("Every  planet's orbit obeys KEPLER's third law", good.ID))
		return err
	})
	wantRefused(t, s, "is no sufficient, counting link of root", func() error {
		_, err := call[Claim](t, lab, "claim", repair("unperturbed orbits obey Kepler's third law", run.ID))
		return err
	})
	wantRefused(t, s, "takes evidence", func() error {
		_, err := call[Link](t, lab, "link", fmt.Sprintf(`{"claim":"root","experiment":%q,"output":"r.json","sufficient":true}`, good.ID))
		return err
	})
	fixed := mustCall[Claim](t, lab, "claim", repair("unperturbed orbits obey Kepler's third law", good.ID))
	if fixed.Relation != RelRepairs || fixed.Repair == nil || *fixed.Parent != RootClaim {
		t.Fatalf("repair %+v", fixed)
	}
}
