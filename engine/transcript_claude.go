package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/simjecture/simjecture/provider/claude"
)

// claudeLines renders a Claude Code stream event (docs/claude.md); ok is
// false for a line that is not one.
func claudeLines(line string) (out []string, ok bool) {
	ev, ok := claude.ParseEvent([]byte(line))
	if !ok {
		return nil, false
	}
	switch ev.Type {
	case "system":
		return claudeSystemLines(ev), true
	case "result":
		return claudeResultLines(ev), true
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

func claudeSystemLines(ev claude.Event) []string {
	switch ev.Subtype {
	case "init":
		return []string{"── session " + ev.SessionID}
	case "api_retry":
		status := 0
		if ev.ErrorStatus != nil {
			status = *ev.ErrorStatus
		}
		return []string{fmt.Sprintf("── request failed (HTTP %d); Claude Code retries (attempt %d)", status, ev.Attempt)}
	}
	return nil
}

func claudeResultLines(ev claude.Event) []string {
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
	return append([]string{head}, outputTail(text)...)
}
