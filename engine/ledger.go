package engine

import "time"

// This file is the claim ledger of the structured and frontier modes
// (contract section 12): the kinds, relations and statuses of a claim, its
// versioned evidence contracts and its evidence links. Minimal mode never
// sets these fields, so its records encode as before.

// ClaimKind says what a claim is about.
type ClaimKind string

// The claim kinds.
const (
	KindScientific ClaimKind = "scientific"
	KindInstrument ClaimKind = "instrument"
	KindDiagnostic ClaimKind = "diagnostic"
	KindControl    ClaimKind = "control"
)

// ClaimKinds lists the kinds in protocol order.
var ClaimKinds = []ClaimKind{KindScientific, KindInstrument, KindDiagnostic, KindControl}

// Relation says how a claim stands to its parent.
type Relation string

// The relations.
const (
	RelRoot         Relation = "root"
	RelRepairs      Relation = "repairs"
	RelRefines      Relation = "refines"
	RelAlternate    Relation = "alternate"
	RelInstrumentOf Relation = "instrument_of"
	RelDiagnosticOf Relation = "diagnostic_of"
	RelControlFor   Relation = "control_for"
	RelSucceeds     Relation = "succeeds"
)

// Relations lists the relations a new claim may take (root is the
// operator's own).
var Relations = []Relation{RelRepairs, RelRefines, RelAlternate, RelInstrumentOf, RelDiagnosticOf, RelControlFor, RelSucceeds}

// ClaimStatus is where a claim of the ledger stands.
type ClaimStatus string

// The ledger statuses.
const (
	LedgerOpen              ClaimStatus = "open"
	LedgerSupported         ClaimStatus = "supported"
	LedgerFalsified         ClaimStatus = "falsified"
	LedgerWeakened          ClaimStatus = "weakened"
	LedgerSuperseded        ClaimStatus = "superseded"
	LedgerUnresolved        ClaimStatus = "unresolved"
	LedgerInstrumentLimited ClaimStatus = "instrument_limited"
)

// Repair is what a repairs claim owes its falsified parent.
type Repair struct {
	Counterexamples        []string `json:"counterexamples"` // experiments linked as counting under the parent's decisive contract
	Accommodation          string   `json:"accommodation"`
	SemanticChange         string   `json:"semantic_change"`
	FalsificationCondition string   `json:"falsification_condition"`
}

// ContractPurpose says what an evidence contract may decide.
type ContractPurpose string

// The contract purposes.
const (
	PurposeDecision       ContractPurpose = "decision"
	PurposeTerminalRecord ContractPurpose = "terminal_record"
)

// Check is one machine check of a run's JSON output.
type Check struct {
	Output string `json:"output"`
	Path   string `json:"path"`
	Equals Scalar `json:"equals"`
}

// Binding names the only program and argument lists whose runs may count.
type Binding struct {
	Source string     `json:"source"`
	Args   [][]string `json:"args"`
}

// EvidenceContract is one version of a claim's prospective test design.
type EvidenceContract struct {
	Version                int             `json:"version"`
	Purpose                ContractPurpose `json:"purpose"`
	Observable             string          `json:"observable"`
	ExpectedOutcomes       string          `json:"expected_outcomes"`
	DecisionRule           string          `json:"decision_rule"`
	RequiredObservation    string          `json:"required_observation"`
	UncertaintyCriterion   string          `json:"uncertainty_criterion"`
	InconclusiveConditions string          `json:"inconclusive_conditions"`
	Checks                 []Check         `json:"checks"`
	Binding                *Binding        `json:"binding,omitempty"`
	OpSeq                  int64           `json:"op_seq"` // the event log's head when it was registered
	CreatedAt              time.Time       `json:"created_at"`
}

// Link is one run's output offered as evidence for a claim, bound to the
// contract version that was the latest when it was linked.
type Link struct {
	Experiment      string    `json:"experiment"`
	Output          string    `json:"output"`
	Sufficient      bool      `json:"sufficient"`
	Note            string    `json:"note,omitempty"`
	ContractVersion int       `json:"contract_version"` // 0: the claim had no contract
	Counts          bool      `json:"counts"`
	Reasons         []string  `json:"reasons"` // why it does not count; empty when it does
	SHA256          string    `json:"sha256"`  // the output as re-hashed when linked
	CreatedAt       time.Time `json:"created_at"`
}

// kindOf is a claim's kind; the root of a minimal study has none and is
// scientific.
func kindOf(c Claim) ClaimKind {
	if c.Kind == "" {
		return KindScientific
	}
	return c.Kind
}

// latest is the claim's newest contract version, or nil.
func (c Claim) latest() *EvidenceContract {
	if len(c.Contracts) == 0 {
		return nil
	}
	return &c.Contracts[len(c.Contracts)-1]
}
