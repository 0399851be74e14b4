package scripted

import (
	"fmt"
)

// contractFor is the evidence contract of a claim: the energy check at its
// case, decided by the check's booleans — false to falsify (what the
// workbench showed for a claim that fails), true to support.
func contractFor(c sciClaim, args []string, falsify bool, crit Criterion) map[string]any {
	out := argValue(args, "--out")
	want := !falsify
	checks := []map[string]any{{"output": out, "path": "$.stated.within_tolerance", "equals": want}}
	if argValue(args, "--challenge-e") != "" {
		checks = append(checks, map[string]any{"output": out, "path": "$.challenge.within_tolerance", "equals": true})
	}
	rule := fmt.Sprintf("the claim is supported when every check passes: %s at the stated case and at the challenge", crit)
	if falsify {
		rule = fmt.Sprintf("the claim is falsified when a fresh run at the stated case breaks %s (within_tolerance false)", crit)
	}
	return map[string]any{
		"claim": c.ID, "purpose": "decision",
		"observable":              "max_rel_energy_error of " + argValue(args, "--method") + " at the stated case, as energy_check.py reports it",
		"expected_outcomes":       fmt.Sprintf("within_tolerance true when %s holds, false when it does not", crit),
		"decision_rule":           rule,
		"required_observation":    "one succeeded evidence run of energy_check.py with exactly the bound arguments",
		"uncertainty_criterion":   "the integrator is deterministic: one run decides; the tolerance is the operator's",
		"inconclusive_conditions": "the run fails, times out or writes no energy check",
		"checks":                  checks,
		"binding":                 map[string]any{"source": CheckName, "args": [][]string{args}},
	}
}

// falsifies reports whether a contract decides toward falsification (its
// stated-case check expects the tolerance broken).
func falsifies(v sciContract) bool {
	for _, ch := range v.Checks {
		if ch.Path == "$.stated.within_tolerance" {
			b, ok := ch.Equals.(bool)
			return ok && !b
		}
	}
	return false
}

// repair is the repair scientist's work: one scientific repairs claim of
// the falsified claim, its counterexamples the parent's counting links
// under its decisive contract, and its contract with a harder challenge.
func (t *sciTurn) repair(parentID string) error {
	parent, ok := t.snap.claim(parentID)
	if !ok {
		return fmt.Errorf("no claim %s: %w", parentID, ErrProtocol)
	}
	var counter []string
	for _, k := range parent.Links {
		if k.Counts && k.ContractVersion == parent.DecisiveVersion {
			counter = append(counter, k.Experiment)
		}
	}
	if len(counter) == 0 {
		return t.handoff("blocked", "the falsified claim has no counting link to repair from")
	}
	req := repairClaim(parent, counter, t.crit, t.stated)
	var child sciClaim
	if err := t.call("claim", req, &child); err != nil {
		return err
	}
	child.Relation = "repairs"
	stated, harder := t.caseOf(child)
	args := checkArgs(stated, t.crit.Threshold, harder, stated.Method+"_check.json")
	if err := t.call("contract", contractFor(child, args, false, t.crit), nil); err != nil {
		return err
	}
	if err := t.call("review", map[string]any{"stage": "contract", "claim": child.ID}, nil); err != nil {
		return err
	}
	return t.handoff("registered", "test the repair "+child.ID+" at the stated case and the harder challenge")
}

func repairClaim(parent sciClaim, counter []string, crit Criterion, stated runSpec) map[string]any {
	harder := challengeOf(stated)
	return map[string]any{
		"statement": fmt.Sprintf("A symplectic integrator (leapfrog) conserves the total energy of the same Kepler orbit (e = %s) "+
			"to within %s over %s orbits at %s steps per orbit.", num(stated.E), percent(crit.Threshold), num(stated.Orbits), num(stated.StepsPerOrbit)),
		"kind": "scientific", "relation": "repairs", "parent": parent.ID,
		"rationale": "The falsified claim's integrator is not symplectic, so its energy error drifts every orbit; " +
			"a symplectic one conserves a nearby shadow Hamiltonian and its error stays bounded.",
		"repair": map[string]any{
			"counterexamples": counter,
			"accommodation":   "replace the non-symplectic integrator of the counterexamples by leapfrog for the same orbit and tolerance",
			"semantic_change": "the claim is about a symplectic integrator, not about the method the hypothesis named",
			"falsification_condition": fmt.Sprintf("leapfrog breaks %s at the stated case or at the harder challenge (e = %s, %s orbits)",
				crit, num(harder.E), num(harder.Orbits)),
		},
	}
}
