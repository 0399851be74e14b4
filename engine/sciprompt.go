package engine

import (
	"fmt"
	"strings"
)

// writeScienceGuide is the guide of a structured or frontier turn: the
// operator's files, the role and its calls, and the discipline's rules.
func (sv *Supervisor) writeScienceGuide(b *strings.Builder, plan turnPlan) {
	fmt.Fprintf(b, "You are the %s of a simjecture study in %s mode (turn-based).\n\n# Hypothesis\n%s\n\n# Instructions\n%s\n\n",
		plan.role, sv.k.Mode, strings.TrimSpace(sv.hypothesis), strings.TrimSpace(sv.instructions))
	b.WriteString(`# How to work
- Your working folder is research/. Write programs there; run them only through the harness:
  "$SIMJECTURE_BIN" lab CALL  with one JSON object on stdin. Your calls: ` + strings.Join(CallNamesFor(plan.role), ", ") + `.
- The claim ledger: root is the operator's hypothesis. lab claim registers claims (kind, relation, parent);
  lab contract registers the next version of a claim's evidence contract: its observable, decision rule and
  machine checks {output, path, equals} on JSON outputs (path grammar $.key(.key|[N])*), optionally bound
  to one program and its argument lists.
- Before a decisive run, ask for a contract review: lab review {"stage":"contract","claim":ID}. An evidence
  run (stage evidence, with claim) needs the latest version approved; a new version or a changed bound
  source voids the approval. Stage workbench is free for qualification and debugging and is never evidence.
- lab link offers a finished run's output as evidence; it counts only for a succeeded evidence run queued
  after the contract version, with every check passing and the binding matched (the reasons say why not).
- lab close sets falsified (needs a counting link under an approved contract), weakened, superseded,
  unresolved or instrument_limited. Nobody closes a claim as supported: ask the judge with
  lab review {"stage":"support","claim":ID,"case":"..."}; only its accepted adjudication supports a claim.
- A falsified claim is repaired by a scientific claim of relation repairs with a changed statement and a
  repair {counterexamples (experiments linked as counting under the parent's decisive contract),
  accommodation, semantic_change, falsification_condition}.
- The study completes when no scientific claim is open and a leaf scientific claim is supported by the judge.
  You cannot approve your own result or finish the study.
`)
	switch plan.role {
	case RoleFalsifier:
		b.WriteString("- As falsifier you try to falsify your claim: contract, get it reviewed, run, link, and close it only as falsified. " +
			"You may register only instrument, diagnostic or control claims under it. End with lab handoff.\n")
	case RoleRepairScientist:
		b.WriteString("- As repair scientist you register exactly one scientific repairs claim of your falsified claim and its contract " +
			"(and may ask for its contract review); you run nothing. End with lab handoff {\"outcome\":\"registered\"}.\n")
	case RoleResearcher:
		b.WriteString("- As researcher you own root and every claim under it, in one session resumed across turns; keep working while " +
			"experiments run. Your turn ends after a while without any lab activity.\n")
	}
	fmt.Fprintf(b, "- Execution backend: %s.\n", sv.k.ExecutionBackend)
}

// writeAssignment says, on every turn of the scientific modes, which role
// and claim the turn has and what the last handoff asked next.
func writeAssignment(b *strings.Builder, plan turnPlan) {
	if plan.role == RoleWorker {
		return
	}
	fmt.Fprintf(b, "\n# This turn\nRole: %s. Claim: %s. Assignment: %s (at most %d operations).\n",
		plan.role, plan.claim, plan.assignment, MaxAssignmentOps)
	if plan.nextTest != "" {
		fmt.Fprintf(b, "The previous assignment's next test: %s\n", plan.nextTest)
	}
}
