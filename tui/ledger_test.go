package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// ledgerFixture is the running fixture as a structured study: a falsified
// root with an approved contract, its repair with a voided contract (v2
// after an approved v1) and one link that counts and one that does not,
// and an open diagnostic under the repair still on a draft; the falsifier
// works on the repair.
func ledgerFixture() *fakeEngine {
	f := fixture()
	s := &f.state.Snapshot
	s.Mode, s.ExecutionBackend = "structured", "bubblewrap"
	root, repair, diag := &s.Claims[0], &s.Claims[1], &s.Claims[2]
	root.Kind, root.Relation = engine.KindScientific, engine.RelRoot
	root.Contracts = []engine.EvidenceContract{{Version: 1, Purpose: engine.PurposeDecision, Observable: "max |dE/E0| of Euler",
		DecisionRule: "falsified when max |dE/E0| > 0.01"}}
	root.Links = []engine.Link{{Experiment: "exp_52f19cc973d3274d5f6c18e7", Output: "euler.json", ContractVersion: 1, Sufficient: true, Counts: true}}
	repair.Kind, repair.Relation = engine.KindScientific, engine.RelRepairs
	repair.Repair = &engine.Repair{Accommodation: "use leapfrog", SemanticChange: "symplectic, not Euler",
		FalsificationCondition: "leapfrog breaks 1e-4", Counterexamples: []string{"exp_52f19cc973d3274d5f6c18e7"}}
	repair.Contracts = []engine.EvidenceContract{
		{Version: 1, Purpose: engine.PurposeDecision, Observable: "max |dE/E0| of leapfrog"},
		{Version: 2, Purpose: engine.PurposeDecision, Observable: "max |dE/E0| of leapfrog at e = 0.8"},
	}
	repair.Links = []engine.Link{
		{Experiment: "exp_7414d181768254f796d579ab", Output: "leapfrog.json", ContractVersion: 2, Counts: true, Sufficient: true},
		{Experiment: "exp_bfb2add7aaaaaaaaaaaaaaaa", Output: "rk4.json", ContractVersion: 1, Reasons: []string{"linked under contract v1, not the latest"}},
	}
	diag.Kind, diag.Relation = engine.KindDiagnostic, engine.RelDiagnosticOf
	diag.Contracts = []engine.EvidenceContract{{Version: 1, Purpose: engine.PurposeTerminalRecord, Observable: "drift per orbit"}}
	s.Reviews = []engine.Review{
		{ID: "rev_47ebfa35f4bf71c5", Claim: root.ID, Stage: "contract", Status: "resolved", Attempts: 1,
			Verdict: &engine.Verdict{Decision: "approved", Rationale: "binds euler", ContractVersion: 1}},
		{ID: "rev_5a00c33700000000", Claim: repair.ID, Stage: "support", Status: "queued"},
	}
	s.Role = engine.RoleFalsifier
	s.Assignment = &engine.Assignment{ID: "asg_0002", Role: engine.RoleFalsifier, Claim: repair.ID, Status: engine.AssignmentActive}
	s.Contracts = []engine.ClaimContract{
		{Claim: root.ID, Version: 1, State: engine.ContractApproved},
		{Claim: repair.ID, Version: 2, State: engine.ContractVoided},
		{Claim: diag.ID, Version: 1, State: engine.ContractDraft},
	}
	return f
}

func TestGoldenLedgerDashboard(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 36}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := openDash(t, ledgerFixture(), false, size[0], size[1])
			v := m.View()
			golden(t, fmt.Sprintf("ledger_%dx%d", size[0], size[1]), v)
			assertFits(t, v, size[0], size[1])
			for _, want := range []string{"v1 approved · sci", "v2 voided", "v1 draft", "Mode: structured · falsifier on"} {
				if !strings.Contains(v, want) {
					t.Errorf("%dx%d: no %q in\n%s", size[0], size[1], want, v)
				}
			}
		})
	}
}

func TestGoldenLedgerClaimDetail(t *testing.T) {
	t.Parallel()
	m := openDash(t, ledgerFixture(), false, 120, 36)
	m, _ = step(t, m, keyMsg("j")) // the repair, under root
	d, _ := step(t, m, keyMsg("enter"))
	v := d.View()
	golden(t, "ledger_claim_120x36", v)
	for _, want := range []string{"kind        scientific", "relation    repairs", "Contract v1: superseded (decision)",
		"Contract v2: voided (decision)", "Links: 1/2 links count", "does not count: linked under contract v1, not the latest",
		"Review rev_5a00c33700000000: support (queued"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in\n%s", want, v)
		}
	}
}

// TestMinimalShowsNoLedger pins that a minimal study keeps its rows: no
// contract, kind or mode line.
func TestMinimalShowsNoLedger(t *testing.T) {
	t.Parallel()
	m := openDash(t, fixture(), false, 200, 60)
	v := m.View()
	for _, not := range []string{"Mode: ", "approved ·", "sci ", "link"} {
		if strings.Contains(v, not) {
			t.Errorf("minimal dashboard shows %q:\n%s", not, v)
		}
	}
}

// TestSteerHintOnlyWhenItCanAct: the footer offers `s guidance` while the
// study can take guidance, `s guidance (read)` once it ended (or in
// read-only) with messages to read, and nothing with none.
func TestSteerHintOnlyWhenItCanAct(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		status   engine.Status
		msgs     bool
		readOnly bool
		want     string // "" : no s hint at all
	}{
		{"running", engine.StatusRunning, false, false, "guidance"},
		{"ended with messages", engine.StatusCompleted, true, false, "guidance (read)"},
		{"ended without messages", engine.StatusCompleted, false, false, ""},
		{"read-only with messages", engine.StatusRunning, true, true, "guidance (read)"},
		{"read-only without messages", engine.StatusRunning, false, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := fixture()
			if c.msgs {
				f = withGuidance(f)
			}
			f.state.Snapshot.Status = c.status
			m := openDash(t, f, c.readOnly, 200, 60)
			got := ""
			for _, h := range m.dash.hints() {
				if h.key == "s" {
					got = h.desc
				}
			}
			if got != c.want {
				t.Fatalf("s hint = %q, want %q", got, c.want)
			}
			if c.want == "" {
				m, _ = step(t, m, keyMsg("s"))
				if m.dash.steer.open || !strings.Contains(m.dash.flash, "no guidance to read") {
					t.Fatalf("s with nothing to read: open %t, flash %q", m.dash.steer.open, m.dash.flash)
				}
			}
		})
	}
}

// TestEndedStudySteerOverlayTakesNoText: on an ended study the overlay
// lists the messages, ignores typing and sends nothing on enter.
func TestEndedStudySteerOverlayTakesNoText(t *testing.T) {
	t.Parallel()
	f := withGuidance(fixture())
	f.state.Snapshot.Status = engine.StatusCompleted
	m := openDash(t, f, false, 120, 36)
	m, _ = step(t, m, keyMsg("s"))
	if !m.dash.steer.open {
		t.Fatal("s on an ended study with messages must open the list")
	}
	m = typeRunes(t, m, f, "one more idea")
	m, cmd := step(t, m, keyMsg("enter"))
	if m.dash.steer.input.Value() != "" || cmd != nil || len(f.steered) != 0 {
		t.Fatalf("the ended study's overlay took %q (cmd %v, sent %v)", m.dash.steer.input.Value(), cmd != nil, f.steered)
	}
	if v := m.View(); !strings.Contains(v, "the study has ended: guidance cannot be sent") || !strings.Contains(v, "delivered at") {
		t.Fatalf("overlay:\n%s", v)
	}
}
