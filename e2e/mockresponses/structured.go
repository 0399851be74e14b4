package mockresponses

import (
	"regexp"
	"strings"
	"sync/atomic"
)

// The call ids of the scripted structured conversation.
const (
	CallContract    = "call_lab_contract"
	CallAskContract = "call_lab_review_contract"
	CallHandoff     = "call_lab_handoff"
	CallLink        = "call_lab_link"
	CallAskSupport  = "call_lab_review_support"
)

// JudgeMarker is a phrase of the Codex backend's judge prompt.
const JudgeMarker = "independent judge of a simjecture study"

var nextExp = regexp.MustCompile(`next test: link (exp_[0-9a-f]{24})`)

// Structured scripts a structured study through the real Codex CLI: the
// first falsifier assignment writes sim.py with the shell, contracts root
// and asks for its review (turn 1), then — its thread resumed — runs the
// evidence and hands off with the run's id in its next test (turn 2); the
// second assignment, a fresh thread, links that run and asks the judge for
// support. The contract reviewer approves the packet's version. The
// judge's first session searches the web before its verdict (a tool in its
// stream: the verdict must be rejected); the second answers with the
// verdict alone.
func Structured() Script {
	var judgeSearched atomic.Bool
	return func(r Request) Reply {
		usage := Usage{Input: int64(100 * len(r.Input)), Output: 20}
		switch {
		case r.Mentions(JudgeMarker):
			if judgeSearched.CompareAndSwap(false, true) { // a tool in the stream: the verdict must be void
				return Reply{WebSearch: "is sum k^3 = (n(n+1)/2)^2", Text: scienceVerdict(r, "sufficient"), Usage: usage}
			}
			return Reply{Text: scienceVerdict(r, "sufficient"), Usage: usage}
		case r.Mentions(ReviewerMarker):
			return Reply{Text: scienceVerdict(r, "approved"), Usage: usage}
		}
		if calls := falsifierStep(r); calls != nil {
			return Reply{Calls: calls, Usage: usage}
		}
		return Reply{Text: "Done for this turn.", Usage: usage}
	}
}

// falsifierStep is the next call of a falsifier, or none (end the turn).
func falsifierStep(r Request) []Call {
	last := r.Last()
	done := func(id string) bool { _, ok := r.Output(id); return ok }
	if last.Type == "function_call_output" {
		switch last.CallID {
		case CallWrite:
			return []Call{labCall(CallContract, "contract", contractArgs())}
		case CallContract:
			return []Call{labCall(CallAskContract, "review", map[string]any{"stage": "contract", "claim": "root"})}
		case CallRun:
			id := expID.FindString(last.Output)
			return []Call{labCall(CallHandoff, "handoff", map[string]any{"outcome": "inconclusive",
				"experiments": []string{}, "next_test": "link " + id + " once it has finished"})}
		case CallLink:
			return []Call{labCall(CallAskSupport, "review", map[string]any{"stage": "support", "claim": "root",
				"case": "holds is true for every n up to 3000, by exact integer arithmetic"})}
		}
		return nil
	}
	if m := nextExp.FindStringSubmatch(strings.Join(texts(r), "\n")); m != nil && !done(CallLink) {
		return []Call{labCall(CallLink, "link", map[string]any{"claim": "root", "experiment": m[1], "output": "result.json",
			"sufficient": true, "note": "the contracted check"})}
	}
	switch {
	case !done(CallWrite) && !nextExp.MatchString(strings.Join(texts(r), "\n")):
		cmd := "cat > sim.py <<'EOF'\n" + Sim + "EOF\n"
		return []Call{{ID: CallWrite, Name: "exec_command", Arguments: args(map[string]any{"cmd": cmd})}}
	case done(CallAskContract) && !done(CallRun):
		return []Call{labCall(CallRun, "run", map[string]any{"source": "sim.py", "args": []string{"3000"},
			"outputs": []string{"result.json"}, "stage": "evidence", "claim": "root"})}
	}
	return nil
}

func labCall(id, name string, a map[string]any) Call {
	return Call{ID: id, Namespace: LabNamespace, Name: name, Arguments: args(a)}
}

func contractArgs() map[string]any {
	return map[string]any{"claim": "root", "observable": "the largest |sum k^3 - (n(n+1)/2)^2| up to n = 3000",
		"expected_outcomes": "0 when the identity holds", "decision_rule": "holds true supports, false falsifies",
		"required_observation": "one evidence run of sim.py 3000", "uncertainty_criterion": "exact integer arithmetic",
		"inconclusive_conditions": "the run fails or writes no result",
		"checks":                  []map[string]any{{"output": "result.json", "path": "$.holds", "equals": true}},
		"binding":                 map[string]any{"source": "sim.py", "args": [][]string{{"3000"}}}}
}

var packetVersion = regexp.MustCompile(`"contract":\s*\{\s*"version":\s*(\d+)`)

// scienceVerdict answers a scientific packet for root at the packet's version.
func scienceVerdict(r Request, decision string) string {
	version := "1"
	if m := packetVersion.FindStringSubmatch(strings.Join(texts(r), "\n")); m != nil {
		version = m[1]
	}
	return `{"claim_id":"root","contract_version":` + version + `,"decision":"` + decision +
		`","rationale":"the contracted check on a fresh evidence run decides it","evidence_gaps":[],"next_test":null}`
}

func texts(r Request) []string {
	out := make([]string, 0, len(r.Input))
	for _, it := range r.Input {
		out = append(out, it.Text)
	}
	return out
}
