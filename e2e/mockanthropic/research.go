package mockanthropic

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/simjecture/simjecture/e2e/mockresponses"
)

// The tool_use ids of the scripted research conversation.
const (
	CallWrite  = "toolu_write_sim"
	CallRun    = "toolu_lab_run"
	CallReview = "toolu_lab_review"
	CallRead   = "toolu_read_result" // the reviewer reads a collected result.json
)

// LabPrefix is the prefix Claude Code gives the tools of the MCP server it
// knows as "simjecture".
const LabPrefix = "mcp__simjecture__"

// ReviewerMarker is a phrase of the reviewer prompt.
const ReviewerMarker = mockresponses.ReviewerMarker

var (
	expID       = regexp.MustCompile(`exp_[0-9a-f]{24}`)
	artifactDir = regexp.MustCompile(`"artifact_dir":\s*"([^"]+)"`)
	workDir     = regexp.MustCompile(`Primary working directory: (\S+)`)
)

// Research scripts a whole study, deciding every reply from the request
// alone: the worker's first turn writes sim.py with Claude Code's Write
// tool, then queues it with the MCP run tool; its second turn — the same
// session, resumed — asks for a review with the MCP review tool; the
// reviewer reads the collected result.json with Claude Code's Read tool
// and approves when it holds. Anything else gets a short idle answer.
func Research(r Request) Reply {
	usage := Usage{Input: int64(100 * len(r.Messages)), Output: 20}
	if r.Mentions(ReviewerMarker) {
		return review(r, usage)
	}
	switch last := r.LastResult(); {
	case last == CallWrite:
		return Reply{Calls: []Call{runCall()}, Usage: usage}
	case last == CallRun:
		return Reply{Text: "Experiment queued; ending the turn until it finishes.", Usage: usage}
	case last == CallReview:
		return Reply{Text: "Review requested; ending the turn.", Usage: usage}
	case last == "":
		if out, ok := r.Result(CallRun); ok {
			if id := expID.FindString(out); id != "" {
				return Reply{Calls: []Call{reviewCall(id)}, Usage: usage}
			}
		}
		if _, ok := r.Result(CallWrite); !ok {
			return Reply{Calls: []Call{writeCall(r)}, Usage: usage}
		}
	}
	return Reply{Text: "Nothing further to do in this turn.", Usage: usage}
}

// LastResult is the tool_use id the last user message answers, or "" when
// it answers none (a new prompt).
func (r Request) LastResult() string {
	if len(r.Messages) == 0 {
		return ""
	}
	for _, b := range r.Messages[len(r.Messages)-1].Blocks {
		if b.Type == "tool_result" {
			return b.ToolUseID
		}
	}
	return ""
}

// Result returns the result of the tool call with this id, if the
// conversation holds it.
func (r Request) Result(id string) (string, bool) {
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == "tool_result" && b.ToolUseID == id {
				return b.Text, true
			}
		}
	}
	return "", false
}

// Mentions reports whether the system prompt or any text block holds s.
func (r Request) Mentions(s string) bool {
	if strings.Contains(r.System, s) {
		return true
	}
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == "text" && strings.Contains(b.Text, s) {
				return true
			}
		}
	}
	return false
}

// HasTool reports whether a tool of this name is offered.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// Called reports whether the conversation holds a tool_use with this id.
func (r Request) Called(id string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == "tool_use" && b.ID == id {
				return true
			}
		}
	}
	return false
}

// WorkDir is the working directory Claude Code names in its prompt.
func (r Request) WorkDir() string {
	if m := workDir.FindStringSubmatch(r.System); m != nil {
		return m[1]
	}
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if m := workDir.FindStringSubmatch(b.Text); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

func args(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func writeCall(r Request) Call {
	return Call{ID: CallWrite, Name: "Write", Input: args(map[string]any{
		"file_path": filepath.Join(r.WorkDir(), "sim.py"), "content": mockresponses.Sim})}
}

func runCall() Call {
	return Call{ID: CallRun, Name: LabPrefix + "run", Input: mockresponses.RunArgs()}
}

func reviewCall(id string) Call {
	return Call{ID: CallReview, Name: LabPrefix + "review", Input: mockresponses.ReviewArgs(id)}
}

// review reads the first experiment's result.json through Claude Code,
// then judges: the verdict of the packet when what it read holds, a
// malformed answer (the review stays open) when the read failed.
func review(r Request, usage Usage) Reply {
	out, read := r.Result(CallRead)
	switch dir := artifactDir.FindStringSubmatch(strings.Join(texts(r), "\n")); {
	case !read && dir != nil:
		input := args(map[string]any{"file_path": filepath.Join(dir[1], "result.json")})
		return Reply{Calls: []Call{{ID: CallRead, Name: "Read", Input: input}}, Usage: usage}
	case read && strings.Contains(out, `"holds": true`):
		return Reply{Text: mockresponses.Verdict(texts(r)), Usage: usage}
	}
	return Reply{Text: "I could not read the collected result.json: " + out, Usage: usage}
}

func texts(r Request) []string {
	var out []string
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			out = append(out, b.Text)
		}
	}
	return out
}
