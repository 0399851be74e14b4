package claude

import "encoding/json"

// Event is one line of Claude Code's `--output-format stream-json
// --verbose` output, as far as simjecture reads it (docs/claude.md): the
// backend for sessions, usage and error events, the logs view to render it.
type Event struct {
	Type      string   `json:"type"` // system, assistant, user, result
	Subtype   string   `json:"subtype"`
	SessionID string   `json:"session_id"`
	Message   *Message `json:"message"`
	// A synthetic assistant message for a failed API request, and an
	// erroneous result, carry the API's status, error type and Claude
	// Code's own word for the error.
	IsAPIError     bool   `json:"is_api_error_message"`
	IsError        bool   `json:"is_error"`
	Error          string `json:"error"`
	APIError       string `json:"api_error"`
	APIErrorStatus *int   `json:"api_error_status"`
	APIErrorType   string `json:"api_error_type"`
	Result         string `json:"result"`
	// An api_retry notice's attempt and status.
	Attempt     int  `json:"attempt"`
	ErrorStatus *int `json:"error_status"`
	Usage       *struct {
		InputTokens   int64 `json:"input_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
		OutputTokens  int64 `json:"output_tokens"`
	} `json:"usage"`
}

// Message is an assistant or user message of the stream.
type Message struct {
	Content []Block `json:"content"`
}

// Block is one content block: text, thinking, tool_use (Name, Input) or
// tool_result (Content, IsError).
type Block struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
}

// eventTypes are the event types of the stream.
var eventTypes = map[string]bool{"system": true, "assistant": true, "user": true, "result": true}

// ParseEvent reads one line; ok is false for a line that is not an event
// of the stream.
func ParseEvent(line []byte) (ev Event, ok bool) {
	if json.Unmarshal(line, &ev) != nil || !eventTypes[ev.Type] {
		return Event{}, false
	}
	return ev, true
}
