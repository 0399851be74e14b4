package engine

import (
	"encoding/json"
	"fmt"
	"strings"
)

// transcriptEvent is what TranscriptLines reads of one JSONL line of
// `codex exec --json` (see docs/codex.md).
type transcriptEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	Item *transcriptItem `json:"item"`
}

type transcriptItem struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Command  string          `json:"command"`
	ExitCode *int            `json:"exit_code"`
	Output   string          `json:"aggregated_output"`
	Server   string          `json:"server"`
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"arguments"`
	Query    string          `json:"query"`
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

// maxOutputLines bounds how much of a command's output a transcript shows.
const maxOutputLines = 8

// TranscriptLines renders one line of an agent's stdout for a reader: a
// Claude Code stream event (transcript_claude.go) or a Codex JSONL event becomes its agent message, command (with the end of its
// output and its exit code), tool call or error, and events that carry
// nothing to read (item.started, turn.started) become none. A line that is
// not a JSON event is returned as it is (a command agent's plain text).
func TranscriptLines(line string) []string {
	var ev transcriptEvent
	trimmed := strings.TrimSpace(line)
	if !strings.HasPrefix(trimmed, "{") {
		return []string{line}
	}
	if out, ok := claudeLines(trimmed); ok {
		return out
	}
	if json.Unmarshal([]byte(trimmed), &ev) != nil || ev.Type == "" {
		return []string{line}
	}
	switch ev.Type {
	case "thread.started", "turn.started", "item.started", "item.updated":
		return nil
	case "turn.completed":
		if ev.Usage == nil {
			return []string{"── turn completed"}
		}
		return []string{fmt.Sprintf("── turn completed (%d input, %d output tokens)", ev.Usage.InputTokens, ev.Usage.OutputTokens)}
	case "turn.failed":
		msg := "turn failed"
		if ev.Error != nil && ev.Error.Message != "" {
			msg += ": " + ev.Error.Message
		}
		return []string{"── " + msg}
	case "error":
		return []string{"error: " + ev.Message}
	case "item.completed":
		if ev.Item != nil {
			return ev.Item.lines()
		}
	}
	return []string{ev.Type}
}

func (it *transcriptItem) lines() []string {
	switch it.Type {
	case "agent_message":
		return prefixed("agent: ", it.Text)
	case "reasoning":
		return prefixed("thinking: ", it.Text)
	case "command_execution":
		return it.commandLines()
	case "mcp_tool_call":
		return []string{fmt.Sprintf("tool: %s.%s %s", it.Server, it.Tool, oneLineJSON(it.Args))}
	case "file_change":
		var out []string
		for _, c := range it.Changes {
			out = append(out, fmt.Sprintf("file: %s %s", c.Kind, c.Path))
		}
		return out
	case "web_search":
		return []string{"search: " + it.Query}
	case "error":
		return prefixed("error: ", it.Text)
	}
	return prefixed(it.Type+": ", it.Text)
}

func (it *transcriptItem) commandLines() []string {
	head := "$ " + it.Command
	if it.ExitCode != nil {
		head += fmt.Sprintf("  (exit %d)", *it.ExitCode)
	}
	if it.Output == "" {
		return []string{head}
	}
	return append([]string{head}, outputTail(it.Output)...)
}

// outputTail is the last maxOutputLines lines of a command's or tool's
// output, indented, after a line counting those left out.
func outputTail(text string) []string {
	var out []string
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if n := len(lines); n > maxOutputLines {
		out = append(out, fmt.Sprintf("  … %d lines of output", n-maxOutputLines))
		lines = lines[n-maxOutputLines:]
	}
	for _, l := range lines {
		out = append(out, "  "+l)
	}
	return out
}

// prefixed puts prefix before the first line of text and indents the rest.
func prefixed(prefix, text string) []string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	pad := strings.Repeat(" ", len(prefix))
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return lines
}

func oneLineJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
