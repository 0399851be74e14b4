package mockanthropic

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/simjecture/simjecture/e2e/mockresponses"
)

// Request is one decoded model request, with the headers the CLI sent.
type Request struct {
	Seq      int // 1 for the first model request the server received
	Header   http.Header
	Model    string
	Stream   bool
	System   string
	Messages []Message
	Tools    []string // the names of the tools offered
	Raw      json.RawMessage
}

// Message is one message of the conversation.
type Message struct {
	Role   string
	Blocks []Block
}

// Block is one content block: text (Text), tool_use (ID, Name, Input) or
// tool_result (ToolUseID, Text, IsError).
type Block struct {
	Type      string
	Text      string
	ID        string
	Name      string
	Input     json.RawMessage
	ToolUseID string
	IsError   bool
}

type rawBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func decode(body []byte, h http.Header) (Request, error) {
	var raw struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Request{}, fmt.Errorf("decode request: %w", err)
	}
	req := Request{Header: h.Clone(), Model: raw.Model, Stream: raw.Stream, System: mockresponses.Text(raw.System), Raw: body}
	for _, t := range raw.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for _, m := range raw.Messages {
		req.Messages = append(req.Messages, Message{Role: m.Role, Blocks: blocks(m.Content)})
	}
	return req, nil
}

// blocks reads a message's content: a string is one text block.
func blocks(raw json.RawMessage) []Block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Block{{Type: "text", Text: s}}
	}
	var list []rawBlock
	_ = json.Unmarshal(raw, &list)
	out := make([]Block, len(list))
	for i, b := range list {
		out[i] = Block{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name, Input: b.Input, ToolUseID: b.ToolUseID, IsError: b.IsError}
		if b.Type == "tool_result" {
			out[i].Text = mockresponses.Text(b.Content)
		}
	}
	return out
}

// content is the reply's content blocks as the API returns them whole.
func content(reply Reply) []map[string]any {
	var out []map[string]any
	if reply.Text != "" {
		out = append(out, map[string]any{"type": "text", "text": reply.Text})
	}
	for _, c := range reply.Calls {
		out = append(out, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Input)})
	}
	return out
}

func stopReason(reply Reply) string {
	if len(reply.Calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// whole answers a request that did not ask for a stream.
func whole(w http.ResponseWriter, id, model string, reply Reply) {
	b, _ := json.Marshal(map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content(reply), "stop_reason": stopReason(reply), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": reply.Usage.Input, "output_tokens": reply.Usage.Output}})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// sse writes server-sent events.
type sse struct{ w http.ResponseWriter }

func (e sse) send(typ string, fields map[string]any) { mockresponses.SendEvent(e.w, typ, fields) }

// stream sends reply as one streamed message.
func stream(w http.ResponseWriter, id, model string, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	e := sse{w: w}
	e.send("message_start", map[string]any{"message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": reply.Usage.Input, "output_tokens": 1}}})
	e.send("ping", map[string]any{})
	for i, b := range content(reply) {
		block(e, i, b)
		if reply.DropStream {
			return // the handler returns mid-message: the client sees the stream end early
		}
	}
	e.send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stopReason(reply), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": reply.Usage.Output}})
	e.send("message_stop", map[string]any{})
}

// block streams one content block: text in text_delta chunks, a tool_use's
// input in input_json_delta chunks.
func block(e sse, index int, b map[string]any) {
	if b["type"] == "text" {
		e.send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, c := range mockresponses.Chunks(b["text"].(string), 40) {
			e.send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": c}})
		}
	} else {
		start := map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
		e.send("content_block_start", map[string]any{"index": index, "content_block": start})
		for _, c := range mockresponses.Chunks(string(b["input"].(json.RawMessage)), 64) {
			e.send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": c}})
		}
	}
	e.send("content_block_stop", map[string]any{"index": index})
}
