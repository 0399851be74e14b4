package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/simjecture/simjecture/engine/jsonerr"
)

// callHandler runs one lab call on arguments its schema has accepted.
type callHandler struct {
	args reflect.Type // the decoded argument type, for the schema check in tests
	run  func(*Lab, context.Context, []byte) (any, error)
}

// handler adapts a typed Lab method to a row of the call table: it decodes
// the raw JSON arguments into A and returns the method's R.
func handler[A, R any](fn func(*Lab, context.Context, A) (R, error)) callHandler {
	return callHandler{args: reflect.TypeFor[A](), run: func(l *Lab, ctx context.Context, raw []byte) (any, error) {
		var a A
		if len(bytes.TrimSpace(raw)) == 0 {
			raw = []byte("{}") // no arguments, as CheckArgs reads it
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("arguments: %s: %w", jsonerr.Problem(raw, err), ErrLab)
		}
		r, err := fn(l, ctx, a)
		if err != nil {
			return nil, err
		}
		return r, nil
	}}
}

var resourcesParams = []Param{
	{Name: "cpus", Type: "integer", Description: "CPU cores reserved (default 1)"},
	{Name: "memory_mb", Type: "integer", Description: "resident memory of the whole process tree, MiB (default 4096)"},
	{Name: "max_file_mb", Type: "integer", Description: "largest file the experiment may write, MiB (default 1024)"},
}

var challengeParams = []Param{
	{Name: "strategy", Type: "string", Required: true, Description: "how the claim was put to a harder test"},
	{Name: "experiments", Type: "array", Items: "string", Required: true, Description: "the challenge experiments (a subset of experiments)"},
	{Name: "outcome", Type: "string", Required: true, Description: "what the challenge showed"},
}

var repairParams = []Param{
	{Name: "counterexamples", Type: "array", Items: "string", Required: true, Description: "experiments linked as counting under the parent's decisive contract"},
	{Name: "accommodation", Type: "string", Required: true},
	{Name: "semantic_change", Type: "string", Required: true},
	{Name: "falsification_condition", Type: "string", Required: true},
}

var contractParams = []Param{
	{Name: "claim", Type: "string", Required: true},
	{Name: "purpose", Type: "string", Enum: []string{"decision", "terminal_record"}, Description: "default decision"},
	{Name: "observable", Type: "string", Required: true},
	{Name: "expected_outcomes", Type: "string", Required: true},
	{Name: "decision_rule", Type: "string", Required: true},
	{Name: "required_observation", Type: "string", Required: true},
	{Name: "uncertainty_criterion", Type: "string", Required: true},
	{Name: "inconclusive_conditions", Type: "string", Required: true},
	{Name: "checks", Type: "array", Items: "object", Properties: []Param{
		{Name: "output", Type: "string", Required: true, Description: "a declared output (JSON)"},
		{Name: "path", Type: "string", Required: true, Description: "$.key(.key|[N])*"},
		{Name: "equals", Type: "scalar", Required: true},
	}, Description: "machine checks; a decision contract needs at least one"},
	{Name: "binding", Type: "object", Properties: []Param{
		{Name: "source", Type: "string", Required: true, Description: "program under research/"},
		{Name: "args", Type: "array", Items: "array", Description: "the argument lists whose runs may count"},
	}, Description: "the only program whose runs may count"},
}

func kindNames() []string {
	out := make([]string, len(ClaimKinds))
	for i, k := range ClaimKinds {
		out[i] = string(k)
	}
	return out
}

func relationNames() []string {
	out := make([]string, len(Relations))
	for i, r := range Relations {
		out[i] = string(r)
	}
	return out
}

// labCalls is the one table of the lab protocol (contract section 5): each
// call's schema next to its handler. Read it through [Calls], [FindCall]
// and [CallNames].
var labCalls = []CallSpec{
	{Name: "run", Description: "Queue an experiment in the isolation backend; returns its receipt (status queued) at once.", Params: []Param{
		{Name: "source", Type: "string", Description: "program path under research/ (.py runs under python3, .sh under sh)"},
		{Name: "capability", Type: "string", Description: "capability name, instead of source"},
		{Name: "args", Type: "array", Items: "string", Description: "arguments"},
		{Name: "inputs", Type: "array", Items: "string", Description: "input paths under research/, copied into /work"},
		{Name: "outputs", Type: "array", Items: "string", Required: true, Description: "relative output paths to collect"},
		{Name: "timeout", Type: "number", Description: "wall-time limit in seconds (default 600)"},
		{Name: "key", Type: "string", Description: "distinguishes a deliberate replicate"},
		{Name: "stage", Type: "string", Enum: []string{"exploration", "evidence", "workbench"}, Description: "default evidence; workbench (qualification, never evidence) only in structured and frontier modes"},
		{Name: "purpose", Type: "string", Description: "why this experiment is run"},
		{Name: "commitment", Type: "string", Description: "claim id, for repair evidence"},
		{Name: "claim", Type: "string", Description: "structured and frontier: the claim this run serves (required for stage evidence)"},
		{Name: "resources", Type: "object", Properties: resourcesParams},
	}, Wakes: true, Writes: true, Roles: runners, handler: handler((*Lab).Run)},
	{Name: "status", Description: "One experiment receipt with its log tails; without experiment, a bounded summary: counts, claims, open reviews and the newest verdicts, and a page of receipts (newest first, no log tails).", Params: []Param{
		{Name: "experiment", Type: "string", Description: "experiment id (optional)"},
		{Name: "status", Type: "string", Enum: expStatusNames(), Description: "page only receipts of this status"},
		{Name: "limit", Type: "integer", Description: "receipts per page, 1 to 100 (default 20)"},
		{Name: "offset", Type: "integer", Description: "receipts to skip, newest first (default 0)"},
	}, Roles: everyRole, handler: handler((*Lab).Status)},
	{Name: "notes", Description: "The notes, newest first, each with the note that supersedes it, if any.", Params: []Param{
		{Name: "kind", Type: "string", Enum: noteKindNames(), Description: "only notes of this kind"},
		{Name: "limit", Type: "integer", Description: "notes per page, 1 to 100 (default 20)"},
		{Name: "offset", Type: "integer", Description: "notes to skip (default 0)"},
	}, Roles: minimalOnly, handler: handler((*Lab).Notes)},
	{Name: "brief", Description: "The research state within max_bytes: the latest experiment and verdict always, then whole entries as they fit.", Params: []Param{
		{Name: "max_bytes", Type: "integer", Description: "2048 to 64000 (default 16000)"},
	}, Roles: minimalOnly, handler: handler((*Lab).Brief)},
	{Name: "cancel", Description: "Cancel a queued or running experiment.", Params: []Param{
		{Name: "experiment", Type: "string", Required: true},
		{Name: "reason", Type: "string"},
	}, Wakes: true, Writes: true, Roles: runners, handler: handler((*Lab).Cancel)},
	{Name: "commit", Description: "Commit a repair claim under root or another claim.", Params: []Param{
		{Name: "statement", Type: "string", Required: true},
		{Name: "parent", Type: "string", Description: "root (default) or a claim id"},
		{Name: "acceptance", Type: "string", Description: "the measurable acceptance criterion"},
		{Name: "rationale", Type: "string"},
		{Name: "source", Type: "string", Description: "program under research/ that tests it"},
		{Name: "cases", Type: "array", Items: "array", Description: "argument lists of the test cases"},
	}, Writes: true, Roles: minimalOnly, handler: handler((*Lab).Commit)},
	{Name: "review", Description: "Minimal: ask the independent reviewer to accept a disposition of a claim.", Params: []Param{
		{Name: "claim", Type: "string", Description: "root (default) or a claim id"},
		{Name: "disposition", Type: "string", Required: true, Enum: []string{"supported", "falsified", "unresolved"}},
		{Name: "conclusion", Type: "string", Required: true},
		{Name: "experiments", Type: "array", Items: "string", Required: true},
		{Name: "challenge", Type: "object", Properties: challengeParams, Description: "required for supported"},
	}, Writes: true, Roles: minimalOnly, handler: handler((*Lab).Review)},
	{Name: "review_status", Description: "A review request, with the verdict once resolved.", Params: []Param{
		{Name: "review", Type: "string", Required: true},
	}, Roles: everyRole, handler: handler((*Lab).ReviewStatus)},
	{Name: "note", Description: "Leave a note in the study record; a correction supersedes an earlier note, which stays.", Params: []Param{
		{Name: "statement", Type: "string", Required: true},
		{Name: "kind", Type: "string", Enum: noteKindNames(), Description: "default observation"},
		{Name: "experiments", Type: "array", Items: "string", Description: "the experiments it rests on (each must exist; at most 32)"},
		{Name: "supersedes", Type: "integer", Description: "id of the note this one corrects"},
	}, Writes: true, Roles: minimalOnly, handler: handler((*Lab).Note)},
	// The claim ledger of the structured and frontier modes (engine/ledger.go);
	// minimal refuses these calls.
	{Name: "claim", Description: "Structured and frontier: register a claim of the ledger under its parent.", Params: []Param{
		{Name: "statement", Type: "string", Required: true, Description: "at least 8 characters"},
		{Name: "kind", Type: "string", Required: true, Enum: kindNames()},
		{Name: "relation", Type: "string", Required: true, Enum: relationNames()},
		{Name: "parent", Type: "string", Description: "root (default) or a claim id"},
		{Name: "rationale", Type: "string", Required: true, Description: "at least 8 characters"},
		{Name: "repair", Type: "object", Properties: repairParams, Description: "required for relation repairs"},
	}, Writes: true, Roles: ledgerWriters, handler: handler((*Lab).Claim)},
	{Name: "contract", Description: "Structured and frontier: register the next version of a claim's evidence contract.", Params: contractParams,
		Writes: true, Roles: ledgerWriters, handler: handler((*Lab).Contract)},
	{Name: "link", Description: "Structured and frontier: link a finished run's output to a claim; says whether it counts and why not.", Params: []Param{
		{Name: "claim", Type: "string", Required: true},
		{Name: "experiment", Type: "string", Required: true},
		{Name: "output", Type: "string", Required: true, Description: "one of the run's declared outputs"},
		{Name: "sufficient", Type: "boolean", Required: true, Description: "offered as sufficient under the latest contract"},
		{Name: "note", Type: "string"},
	}, Writes: true, Roles: evidenceRoles, handler: handler((*Lab).Link)},
	{Name: "close", Description: "Structured and frontier: close an open claim (never as supported) through the gate.", Params: []Param{
		{Name: "claim", Type: "string", Required: true},
		{Name: "status", Type: "string", Required: true, Enum: []string{"falsified", "weakened", "superseded", "unresolved", "instrument_limited", "supported"}, Description: "supported is refused: only an accepted support adjudication sets it"},
		{Name: "reason", Type: "string", Required: true, Description: "at least 8 characters"},
		{Name: "contract_version", Type: "integer", Description: "the decisive version (the latest)"},
	}, Writes: true, Roles: evidenceRoles, handler: handler((*Lab).CloseClaim)},
	{Name: "review", Description: "Structured and frontier: ask for a contract review (stage contract) of a claim's latest contract, or for the judge's support adjudication (stage support).", Params: []Param{
		{Name: "stage", Type: "string", Required: true, Enum: []string{string(StageContract), string(StageSupport)}},
		{Name: "claim", Type: "string", Required: true},
		{Name: "contract_version", Type: "integer", Description: "support: the decisive version (the latest)"},
		{Name: "case", Type: "string", Description: "support: the case for sufficiency, at least 8 characters"},
	}, Writes: true, Roles: ledgerWriters, handler: handler((*Lab).ScienceReview)},
	{Name: "handoff", Description: "Structured: end the assignment with its outcome; only reads remain afterwards.", Params: []Param{
		{Name: "outcome", Type: "string", Required: true, Enum: handoffOutcomes},
		{Name: "experiments", Type: "array", Items: "string", Description: "experiments linked to the assignment's claims"},
		{Name: "next_test", Type: "string", Description: "what the next assignment should test"},
	}, Writes: true, Roles: assignedRoles, handler: handler((*Lab).Handoff)},
}

func expStatusNames() []string {
	out := make([]string, len(expStatuses))
	for i, s := range expStatuses {
		out[i] = string(s)
	}
	return out
}

func noteKindNames() []string {
	out := make([]string, len(NoteKinds))
	for i, k := range NoteKinds {
		out[i] = string(k)
	}
	return out
}

// Calls returns the lab calls in protocol order; the copy is the caller's.
func Calls() []CallSpec {
	out := make([]CallSpec, len(labCalls))
	for i, c := range labCalls {
		c.Params = cloneParams(c.Params)
		out[i] = c
	}
	return out
}

func cloneParams(ps []Param) []Param {
	out := slices.Clone(ps)
	for i := range out {
		out[i].Enum = slices.Clone(out[i].Enum)
		out[i].Properties = cloneParams(out[i].Properties)
	}
	return out
}

// FindCall returns the first row of a lab call by name (the CLI's check
// that the name exists); the copy is the caller's.
func FindCall(name string) (CallSpec, bool) {
	i := slices.IndexFunc(labCalls, func(c CallSpec) bool { return c.Name == name })
	if i < 0 {
		return CallSpec{}, false
	}
	c := labCalls[i]
	c.Params = cloneParams(c.Params)
	return c, true
}

// findCall returns the table's own row of a call for a role, for
// Lab.Call's dispatch.
func findCall(name string, role Role) (CallSpec, bool) {
	i := slices.IndexFunc(labCalls, func(c CallSpec) bool { return c.Name == name && slices.Contains(c.Roles, role) })
	if i < 0 {
		return CallSpec{}, false
	}
	return labCalls[i], true
}

// CallsFor returns the calls a role may make, in protocol order.
func CallsFor(role Role) []CallSpec {
	return slices.DeleteFunc(Calls(), func(c CallSpec) bool { return !slices.Contains(c.Roles, role) })
}

// CallNamesFor lists the names of CallsFor(role).
func CallNamesFor(role Role) []string {
	calls := CallsFor(role)
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return names
}

// CallNames lists the names of the lab calls in protocol order, each once
// (a name may have a row per role set, as review has).
func CallNames() []string {
	var names []string
	for _, c := range labCalls {
		if !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	return names
}

// ModeRole is the role an agent of a study in mode has with no assignment
// known: minimal's worker, or the operator of the scientific modes.
func ModeRole(mode string) Role {
	if slices.Contains(ScientificModes, mode) {
		return RoleOperator
	}
	return RoleWorker
}
