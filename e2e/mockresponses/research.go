package mockresponses

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The call ids of the scripted research conversation.
const (
	CallWrite  = "call_write_sim"
	CallRun    = "call_lab_run"
	CallReview = "call_lab_review"
)

// LabNamespace is the tool namespace Codex gives the tools of the MCP
// server it knows as "simjecture".
const LabNamespace = "mcp__simjecture"

// ReviewerMarker is a phrase of the Codex backend's reviewer prompt.
const ReviewerMarker = "independent reviewer of a simjecture study"

// Sim checks sum_{k<=n} k^3 = (n(n+1)/2)^2 and writes result.json.
const Sim = `import json, sys
n = int(sys.argv[1])
total, worst = 0, 0
for k in range(1, n + 1):
    total += k ** 3
    worst = max(worst, abs(total - (k * (k + 1) // 2) ** 2))
with open("result.json", "w") as f:
    json.dump({"n": n, "max_abs_diff": worst, "holds": worst == 0}, f)
print("n=%d max_abs_diff=%d" % (n, worst))
`

var expID = regexp.MustCompile(`exp_[0-9a-f]{24}`)

// Research scripts a whole study, deciding every reply from the request
// alone: the worker's first turn writes sim.py with the shell (and leaves
// a note through the "$SIMJECTURE_BIN" lab fallback), then queues it with
// the MCP run tool; its second turn — the same thread, resumed — asks for a
// review with the MCP review tool; the reviewer reads the collected
// result.json and approves. Anything else gets a short idle answer.
func Research(r Request) Reply {
	usage := Usage{Input: int64(100 * len(r.Input)), Output: 20}
	if r.Mentions(ReviewerMarker) {
		return Reply{Text: verdict(r), Usage: usage}
	}
	last := r.Last()
	switch {
	case last.Type == "function_call_output" && last.CallID == CallWrite:
		return Reply{Calls: []Call{runCall()}, Usage: usage}
	case last.Type == "function_call_output" && last.CallID == CallRun:
		return Reply{Text: "Experiment queued; ending the turn until it finishes.", Usage: usage}
	case last.Type == "function_call_output" && last.CallID == CallReview:
		return Reply{Text: "Review requested; ending the turn.", Usage: usage}
	case last.Type == "message" && last.Role == "user":
		if out, ok := r.Output(CallRun); ok {
			if id := expID.FindString(out); id != "" {
				return Reply{Calls: []Call{reviewCall(id)}, Usage: usage}
			}
		}
		if _, ok := r.Output(CallWrite); !ok {
			return Reply{Calls: []Call{writeCall()}, Usage: usage}
		}
	}
	return Reply{Text: "Nothing further to do in this turn.", Usage: usage}
}

func args(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func writeCall() Call {
	cmd := "cat > sim.py <<'EOF'\n" + Sim + "EOF\n" +
		`echo '{"statement":"wrote sim.py (note through the shell fallback)"}' | "$SIMJECTURE_BIN" lab note`
	return Call{ID: CallWrite, Name: "exec_command", Arguments: args(map[string]any{"cmd": cmd})}
}

func runCall() Call {
	return Call{ID: CallRun, Namespace: LabNamespace, Name: "run", Arguments: RunArgs()}
}

// RunArgs are the arguments of the scripted lab run call (JSON).
func RunArgs() string {
	return args(map[string]any{
		"source": "sim.py", "args": []string{"3000"}, "outputs": []string{"result.json"}, "stage": "evidence",
		"purpose":   "check the identity for every n up to 3000",
		"resources": map[string]any{"cpus": 1, "memory_mb": 256, "max_file_mb": 16},
	})
}

func reviewCall(id string) Call {
	return Call{ID: CallReview, Namespace: LabNamespace, Name: "review", Arguments: ReviewArgs(id)}
}

// ReviewArgs are the arguments of the scripted lab review call of
// experiment id (JSON).
func ReviewArgs(id string) string {
	return args(map[string]any{
		"claim": "root", "disposition": "supported", "experiments": []string{id},
		"conclusion": "sum_{k<=n} k^3 = (n(n+1)/2)^2 holds exactly for every n up to 3000",
		"challenge": map[string]any{"strategy": "exact integer arithmetic at every n, not a sample", "experiments": []string{id},
			"outcome": "max_abs_diff is 0"},
	})
}

// verdict judges the packet in the reviewer prompt.
func verdict(r Request) string {
	texts := make([]string, len(r.Input))
	for i, it := range r.Input {
		texts[i] = it.Text
	}
	return Verdict(texts)
}

// Verdict judges the review packet found in one of texts (after
// "# Review packet") by reading each experiment's collected result.json.
func Verdict(texts []string) string {
	var packet struct {
		ClaimID     string      `json:"claim_id"`
		Disposition string      `json:"disposition"`
		Experiments []packetExp `json:"experiments"`
	}
	for _, text := range texts {
		if _, body, ok := strings.Cut(text, "# Review packet\n"); ok {
			_ = json.Unmarshal([]byte(strings.TrimSpace(body)), &packet)
		}
	}
	v := map[string]any{"claim_id": packet.ClaimID, "decision": "approved", "disposition": packet.Disposition,
		"rationale": "every submitted experiment reports max_abs_diff 0 with exact arithmetic", "evidence_gaps": []string{}, "next_test": nil}
	if gap := checkResults(packet.Experiments); gap != "" || len(packet.Experiments) == 0 {
		v["decision"], v["evidence_gaps"] = "needs_revision", []string{"no conclusive result.json: " + gap}
		v["next_test"] = "rerun the check and collect result.json"
	}
	return args(v)
}

// packetExp is an experiment receipt of the review packet, as far as the
// mock reviewer reads it.
type packetExp struct {
	ID          string `json:"id"`
	ArtifactDir string `json:"artifact_dir"`
}

func checkResults(exps []packetExp) string {
	for _, e := range exps {
		b, err := os.ReadFile(filepath.Join(e.ArtifactDir, "result.json"))
		var res struct{ Holds bool }
		if err != nil || json.Unmarshal(b, &res) != nil || !res.Holds {
			return fmt.Sprintf("%s (%v)", e.ID, err)
		}
	}
	return ""
}
