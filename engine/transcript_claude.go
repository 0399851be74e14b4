package engine

import (
	"encoding/json"
	"fmt"
	"strings"
)

// claudeEvent is what TranscriptLines reads of one line of Claude Code's
// `--output-format stream-json` (see docs/claude.md).
type claudeEvent struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Message   *struct {
		Content []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Name    string          `json:"name"`
			Input   json.RawMessage `json:"input"`
			Content json.RawMessage `json:"content"`
			IsError bool            `json:"is_error"`
		} `json:"content"`
	} `json:"message"`
	IsAPIError bool   `json:"is_api_error_message"`
	IsError    bool   `json:"is_error"`
	Result     string `json:"result"`
	Attempt    int    `json:"attempt"`
	Status     *int   `json:"error_status"`
	Usage      *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

// claudeTypes are the event types of Claude Code's stream.
var claudeTypes = map[string]bool{"system": true, "assistant": true, "user": true, "result": true}

// claudeLines renders a Claude Code stream event; ok is false for a line
// that is not one.
func claudeLines(line string) (out []string, ok bool) {
	var ev claudeEvent
	if json.Unmarshal([]byte(line), &ev) != nil || !claudeTypes[ev.Type] {
		return nil, false
	}
	switch ev.Type {
	case "system":
		return ev.systemLines(), true
	case "result":
		return ev.resultLines(), true
	}
	if ev.Message == nil {
		return nil, true
	}
	for _, c := range ev.Message.Content {
		switch {
		case ev.IsAPIError:
			out = append(out, prefixed("error: ", c.Text)...)
		case c.Type == "text":
			out = append(out, prefixed("agent: ", c.Text)...)
		case c.Type == "thinking":
			out = append(out, prefixed("thinking: ", c.Text)...)
		case c.Type == "tool_use":
			out = append(out, fmt.Sprintf("tool: %s %s", c.Name, oneLineJSON(c.Input)))
		case c.Type == "tool_result":
			out = append(out, resultLines(c.Content, c.IsError)...)
		}
	}
	return out, true
}

func (ev claudeEvent) systemLines() []string {
	switch ev.Subtype {
	case "init":
		return []string{"── session " + ev.SessionID}
	case "api_retry":
		status := 0
		if ev.Status != nil {
			status = *ev.Status
		}
		return []string{fmt.Sprintf("── request failed (HTTP %d); Claude Code retries (attempt %d)", status, ev.Attempt)}
	}
	return nil
}

func (ev claudeEvent) resultLines() []string {
	if ev.IsError {
		return []string{"── turn failed: " + ev.Result}
	}
	if ev.Usage == nil {
		return []string{"── turn completed"}
	}
	return []string{fmt.Sprintf("── turn completed (%d input, %d output tokens)", ev.Usage.InputTokens, ev.Usage.OutputTokens)}
}

// resultLines shows the end of a tool result, as a command's output is.
func resultLines(raw json.RawMessage, isError bool) []string {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(raw, &parts)
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		text = strings.Join(texts, "\n")
	}
	head := "result:"
	if isError {
		head = "result (error):"
	}
	out := []string{head}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if n := len(lines); n > maxOutputLines {
		out = append(out, fmt.Sprintf("  … %d lines", n-maxOutputLines))
		lines = lines[n-maxOutputLines:]
	}
	for _, l := range lines {
		out = append(out, "  "+l)
	}
	return out
}
