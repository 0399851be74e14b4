package codex

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/simjecture/simjecture/provider"
)

// maxLine bounds one buffered JSONL line; a longer line (a huge command
// output, say) is skipped, never buffered without limit.
const maxLine = 8 << 20

// events reads `codex exec --json` output as it arrives and keeps what the
// supervisor needs: the thread, the running usage totals, the last agent
// message and the protocol's error events. It never looks at the agent's
// prose for failures.
type events struct {
	mu    sync.Mutex
	lines *provider.Lines

	thread        string
	lastMessage   string
	input, output *int64
	toolIDs       map[string]bool // tool items seen (anything but messages, reasoning and errors)
	toolAnon      int             // tool items without an id
	pending       []string        // error events of the turn in progress
	failures      []string        // error events of turns that did not complete
}

// event is one JSONL line of `codex exec --json` (see docs/codex.md).
type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens  *int64 `json:"input_tokens"`
		OutputTokens *int64 `json:"output_tokens"`
	} `json:"usage"`
	Item *struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
}

// newEvents reads one run's stdout.
func newEvents() *events {
	e := &events{}
	e.lines = provider.NewLines(maxLine, &e.mu, e.line)
	return e
}

// Write takes a chunk of stdout; it never fails.
func (e *events) Write(p []byte) (int, error) { return e.lines.Write(p) }

// line handles one complete JSONL line; anything that is not an event is
// ignored.
func (e *events) line(b []byte) {
	var ev event
	if json.Unmarshal(bytes.TrimSpace(b), &ev) != nil {
		return
	}
	switch ev.Type {
	case "thread.started":
		if ev.ThreadID != "" {
			e.thread = ev.ThreadID
		}
	case "turn.completed":
		e.pending = nil // errors Codex recovered from within the turn
		if ev.Usage != nil {
			e.input, e.output = ev.Usage.InputTokens, ev.Usage.OutputTokens
		}
	case "turn.failed":
		msg := "turn failed"
		if ev.Error != nil && ev.Error.Message != "" {
			msg = ev.Error.Message
		}
		e.failures = append(e.failures, e.pending...)
		e.failures = append(e.failures, msg)
		e.pending = nil
	case "error":
		if !retryNotice(ev.Message) {
			e.pending = append(e.pending, ev.Message)
		}
	case "item.started", "item.completed":
		e.item(ev)
	}
}

// item records a completed message and counts tool items (commands, file
// changes, MCP calls, web searches: anything but a message, reasoning or
// an error), once per item id.
func (e *events) item(ev event) {
	if ev.Item == nil {
		return
	}
	switch ev.Item.Type {
	case "agent_message":
		if ev.Type == "item.completed" {
			e.lastMessage = ev.Item.Text
		}
	case "reasoning", "error":
	default:
		if ev.Item.ID == "" {
			e.toolAnon++
			return
		}
		if e.toolIDs == nil {
			e.toolIDs = map[string]bool{}
		}
		e.toolIDs[ev.Item.ID] = true
	}
}

// tools counts the tool items of the stream.
func (e *events) tools() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.toolIDs) + e.toolAnon
}

// retryNotice reports a top-level error event that only announces one of
// Codex's own retries ("Reconnecting... 1/5 (…)"); the turn may still
// succeed, and if it does not, a final error and turn.failed follow.
func retryNotice(msg string) bool {
	return strings.HasPrefix(strings.TrimSpace(msg), "Reconnecting...")
}

// errorEvents are the protocol error events that decide the turn's fate:
// every failed turn's errors, and errors left unresolved when the output
// ended (a turn cut off mid-way).
func (e *events) errorEvents() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := append([]string(nil), e.failures...)
	return append(out, e.pending...)
}

// snapshot returns the thread, usage and last agent message seen so far.
func (e *events) snapshot() (thread, last string, input, output *int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.thread, e.lastMessage, e.input, e.output
}
