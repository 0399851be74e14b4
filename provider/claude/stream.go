package claude

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/simjecture/simjecture/provider"
)

// maxLine bounds one buffered JSON line; a longer line (a huge tool
// result, say) is skipped, never buffered without limit.
const maxLine = 8 << 20

// stream reads `claude -p --output-format stream-json --verbose` as it
// arrives and keeps what the supervisor needs: the session, the turn's
// usage, the last assistant text, whether any tool was called, and the API
// error events. It never looks at the model's prose for failures.
type stream struct {
	mu    sync.Mutex
	lines *provider.Lines

	initSeen      bool
	session       string
	lastText      string
	toolUses      int
	input, output *int64
	errors        []apiError
}

// apiError is one error event of the stream: a synthetic assistant message
// Claude Code writes for a failed API request, or an erroneous result.
type apiError struct {
	Status  int
	Type    string // the API's error type (authentication_error, overloaded_error, …)
	Code    string // Claude Code's own word for it (authentication_failed, connection_failed, …)
	Message string // the API's error message as Claude Code reports it
}

func (e apiError) String() string {
	parts := []string{}
	if e.Status != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", e.Status))
	}
	for _, s := range []string{e.Type, e.Code, e.Message} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ": ")
}

// newStream reads one run's stdout.
func newStream() *stream {
	s := &stream{}
	s.lines = provider.NewLines(maxLine, &s.mu, s.line)
	return s
}

// Write takes a chunk of stdout; it never fails.
func (s *stream) Write(p []byte) (int, error) { return s.lines.Write(p) }

// line handles one complete line; anything that is not an event is ignored.
func (s *stream) line(b []byte) {
	ev, ok := ParseEvent(bytes.TrimSpace(b))
	if !ok {
		return
	}
	if ev.SessionID != "" {
		s.session = ev.SessionID
	}
	switch ev.Type {
	case "system":
		s.initSeen = s.initSeen || ev.Subtype == "init"
	case "assistant":
		s.assistant(ev)
	case "result":
		s.result(ev)
	}
}

// assistant reads one assistant message: an API error Claude Code reports
// as a synthetic message, or the model's text and tool calls.
func (s *stream) assistant(ev Event) {
	if ev.Message == nil {
		return
	}
	if ev.IsAPIError {
		s.errors = append(s.errors, toAPIError(ev, joinText(ev)))
		return
	}
	for _, c := range ev.Message.Content {
		switch c.Type {
		case "text":
			if strings.TrimSpace(c.Text) != "" {
				s.lastText = c.Text
			}
		case "tool_use", "server_tool_use":
			s.toolUses++
		}
	}
}

// result reads the final event: usage, and an error if the run failed.
func (s *stream) result(ev Event) {
	if u := ev.Usage; u != nil {
		in, out := u.InputTokens+u.CacheCreation+u.CacheRead, u.OutputTokens
		s.input, s.output = &in, &out
	}
	switch {
	case ev.IsError && (ev.APIErrorStatus != nil || ev.APIError != "" || ev.APIErrorType != ""):
		s.errors = append(s.errors, toAPIError(ev, ev.Result))
	case ev.IsError:
		s.errors = append(s.errors, apiError{Code: ev.Subtype})
	case ev.Result != "":
		s.lastText = ev.Result
	}
}

func toAPIError(ev Event, msg string) apiError {
	e := apiError{Type: ev.APIErrorType, Code: ev.Error, Message: msg}
	if e.Code == "" {
		e.Code = ev.APIError
	}
	if ev.APIErrorStatus != nil {
		e.Status = *ev.APIErrorStatus
	}
	return e
}

func joinText(ev Event) string {
	var parts []string
	for _, c := range ev.Message.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// started reports whether the CLI began a session (its init event).
func (s *stream) started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initSeen
}

// fill sets the Outcome's session, usage and answer. The usage is this
// run's own (Claude Code reports per invocation), so Thread stays empty and
// the supervisor keeps each turn's figures apart.
func (s *stream) fill(out *provider.Outcome, t provider.Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out.InputTokens, out.OutputTokens = s.input, s.output
	out.LastLine = strings.TrimSpace(s.lastText)
	out.ToolCalls = s.toolUses
	if t.Role == provider.RoleWorker {
		out.Cursor = s.session
	}
	if t.ToolFree && s.toolUses > 0 {
		out.LastLine = "" // a tool-free turn that called a tool has no verdict
	}
}
