package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/simjecture/simjecture/store"
)

// MinLedgerText is the shortest statement, rationale or contract field.
const MinLedgerText = 8

// ScientificModes are the modes that keep the claim ledger.
var ScientificModes = []string{"structured", "frontier"}

// relationRule is what a relation asks of a new claim and its parent.
type relationRule struct {
	kind       ClaimKind // the child's kind; "" for succeeds (the predecessor's)
	parentKind ClaimKind // "" for succeeds (any)
}

var relationRules = map[Relation]relationRule{
	RelRepairs:      {KindScientific, KindScientific},
	RelRefines:      {KindScientific, KindScientific},
	RelAlternate:    {KindScientific, KindScientific},
	RelInstrumentOf: {KindInstrument, KindScientific},
	RelDiagnosticOf: {KindDiagnostic, KindScientific},
	RelControlFor:   {KindControl, KindScientific},
	RelSucceeds:     {},
}

func longEnough(field, v string) error {
	if len([]rune(strings.TrimSpace(v))) < MinLedgerText {
		return fmt.Errorf("%s must be at least %d characters: %w", field, MinLedgerText, ErrLab)
	}
	return nil
}

// checkClaimShape checks what a new claim says of itself, before any read.
func checkClaimShape(a ClaimArgs) error {
	if !slices.Contains(ClaimKinds, ClaimKind(a.Kind)) {
		return fmt.Errorf("kind %q: choose one of scientific, instrument, diagnostic, control: %w", a.Kind, ErrLab)
	}
	if Relation(a.Relation) == RelRoot {
		return fmt.Errorf("relation root is the operator's hypothesis alone: %w", ErrLab)
	}
	if _, ok := relationRules[Relation(a.Relation)]; !ok {
		return fmt.Errorf("relation %q: choose one of %s: %w", a.Relation, strings.Join(relationNames(), ", "), ErrLab)
	}
	if err := longEnough("statement", a.Statement); err != nil {
		return err
	}
	if err := longEnough("rationale", a.Rationale); err != nil {
		return err
	}
	if (Relation(a.Relation) == RelRepairs) != (a.Repair != nil) {
		return fmt.Errorf("a repair record goes with relation repairs, and only with it: %w", ErrLab)
	}
	if a.Repair != nil {
		return checkRepairShape(*a.Repair)
	}
	return nil
}

func checkRepairShape(r Repair) error {
	if len(r.Counterexamples) == 0 {
		return fmt.Errorf("a repair needs at least one counterexample (an experiment that falsified its parent): %w", ErrLab)
	}
	for _, f := range []struct{ name, v string }{{"repair.accommodation", r.Accommodation},
		{"repair.semantic_change", r.SemanticChange}, {"repair.falsification_condition", r.FalsificationCondition}} {
		if err := longEnough(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// checkClaimParent checks the new claim against its parent in the ledger.
func checkClaimParent(a ClaimArgs, parent Claim) error {
	rel, kind := Relation(a.Relation), ClaimKind(a.Kind)
	rule := relationRules[rel]
	pk := kindOf(parent)
	switch {
	case rel == RelSucceeds && kind != pk:
		return fmt.Errorf("a succeeds claim has its predecessor's kind (%s): %w", pk, ErrLab)
	case rel == RelSucceeds && parent.Status == string(LedgerOpen):
		return fmt.Errorf("%s is still open; a successor needs a closed predecessor: %w", parent.ID, ErrLab)
	case rel == RelSucceeds:
		return nil
	case kind != rule.kind:
		return fmt.Errorf("relation %s needs kind %s, not %s: %w", rel, rule.kind, kind, ErrLab)
	case pk != rule.parentKind:
		return fmt.Errorf("relation %s needs a %s parent; %s is %s: %w", rel, rule.parentKind, parent.ID, pk, ErrLab)
	case rel == RelRepairs:
		return checkRepairOf(a, parent)
	}
	return nil
}

// checkRepairOf: the parent is falsified, the statement says something
// else, and every counterexample counts under the parent's decisive contract.
func checkRepairOf(a ClaimArgs, parent Claim) error {
	if parent.Status != string(LedgerFalsified) || parent.DecisiveVersion == 0 {
		return fmt.Errorf("only a falsified claim can be repaired; %s is %s: %w", parent.ID, parent.Status, ErrLab)
	}
	if normalizeStatement(a.Statement) == normalizeStatement(parent.Statement) {
		return fmt.Errorf("a repair must change the statement of %s: %w", parent.ID, ErrLab)
	}
	for _, exp := range a.Repair.Counterexamples {
		ok := slices.ContainsFunc(parent.Links, func(k Link) bool {
			return k.Experiment == exp && k.Sufficient && k.Counts && k.ContractVersion == parent.DecisiveVersion
		})
		if !ok {
			return fmt.Errorf("counterexample %s is no sufficient, counting link of %s under its decisive contract (version %d): %w",
				exp, parent.ID, parent.DecisiveVersion, ErrLab)
		}
	}
	return nil
}

func normalizeStatement(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// studyContract is the frozen study contract, read once per Lab.
func (l *Lab) studyContract(tx *store.Tx) (Contract, error) {
	if l.contract != nil {
		return *l.contract, nil
	}
	row, err := tx.GetStudy()
	if err != nil {
		return Contract{}, err
	}
	var k Contract
	if err := json.Unmarshal(row.ContractJSON, &k); err != nil {
		return Contract{}, fmt.Errorf("read study contract: %w", err)
	}
	l.contract = &k
	return k, nil
}

// requireLedger refuses a ledger call outside the structured and frontier
// modes (a study that takes no new work is refused by Lab.write).
func (l *Lab) requireLedger(tx *store.Tx, call string) error {
	k, err := l.studyContract(tx)
	if err != nil {
		return err
	}
	if !slices.Contains(ScientificModes, k.Mode) {
		return fmt.Errorf("lab %s: only in structured and frontier modes (this study is %s): %w", call, k.Mode, ErrLab)
	}
	return nil
}

// headSeq is the event log's head: the durable order of ledger operations.
func headSeq(tx *store.Tx) (int64, error) {
	ev, err := tx.Head()
	if err != nil {
		return 0, fmt.Errorf("read the event head: %w", err)
	}
	return ev.Seq, nil
}
