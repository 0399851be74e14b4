package mockresponses

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// rawItem is an input item as the Responses API spells it.
type rawItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

func decode(body []byte, h http.Header) (Request, error) {
	var raw struct {
		Model string    `json:"model"`
		Input []rawItem `json:"input"`
		Tools []Tool    `json:"tools"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Request{}, fmt.Errorf("decode request: %w", err)
	}
	req := Request{Header: h.Clone(), Model: raw.Model, Tools: raw.Tools, Raw: body}
	for _, it := range raw.Input {
		req.Input = append(req.Input, Item{Type: it.Type, Role: it.Role, Text: Text(it.Content), CallID: it.CallID,
			Namespace: it.Namespace, Name: it.Name, Arguments: it.Arguments, Output: Text(it.Output)})
	}
	return req, nil
}

// Text flattens a string, or a list of content parts with "text", to one
// string (both mock APIs spell content so).
func Text(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\n")
}

// sse writes server-sent events, numbering them.
type sse struct {
	w   http.ResponseWriter
	seq int
}

func (e *sse) send(typ string, fields map[string]any) {
	fields["sequence_number"] = e.seq
	e.seq++
	SendEvent(e.w, typ, fields)
}

// SendEvent writes one server-sent event of this type (also its "type"
// field) and flushes it.
func SendEvent(w http.ResponseWriter, typ string, fields map[string]any) {
	fields["type"] = typ
	b, _ := json.Marshal(fields)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// stream sends reply as one streamed response.
func stream(w http.ResponseWriter, id, model string, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	e := &sse{w: w}
	resp := map[string]any{"id": id, "object": "response", "model": model, "status": "in_progress", "output": []any{}}
	e.send("response.created", map[string]any{"response": resp})
	e.send("response.in_progress", map[string]any{"response": resp})
	var output []any
	if reply.WebSearch != "" {
		output = append(output, webSearch(e, len(output), id, reply.WebSearch))
	}
	if reply.Text != "" {
		output = append(output, message(e, len(output), id, reply.Text))
	}
	for _, c := range reply.Calls {
		output = append(output, functionCall(e, len(output), c))
	}
	done := map[string]any{"id": id, "object": "response", "model": model, "status": "completed", "output": output,
		"usage": map[string]any{
			"input_tokens": reply.Usage.Input, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": reply.Usage.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": reply.Usage.Input + reply.Usage.Output,
		}}
	e.send("response.completed", map[string]any{"response": done})
}

func message(e *sse, index int, respID, text string) map[string]any {
	itemID := fmt.Sprintf("msg_%s_%d", respID, index)
	item := map[string]any{"type": "message", "id": itemID, "role": "assistant", "status": "in_progress", "content": []any{}}
	e.send("response.output_item.added", map[string]any{"output_index": index, "item": item})
	part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
	e.send("response.content_part.added", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "part": part})
	for _, chunk := range Chunks(text, 40) {
		e.send("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "delta": chunk})
	}
	e.send("response.output_text.done", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "text": text})
	part = map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	e.send("response.content_part.done", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "part": part})
	done := map[string]any{"type": "message", "id": itemID, "role": "assistant", "status": "completed", "content": []any{part}}
	e.send("response.output_item.done", map[string]any{"output_index": index, "item": done})
	return done
}

func webSearch(e *sse, index int, respID, query string) map[string]any {
	item := map[string]any{"type": "web_search_call", "id": fmt.Sprintf("ws_%s_%d", respID, index), "status": "in_progress"}
	e.send("response.output_item.added", map[string]any{"output_index": index, "item": item})
	done := map[string]any{"type": "web_search_call", "id": item["id"], "status": "completed",
		"action": map[string]any{"type": "search", "query": query}}
	e.send("response.output_item.done", map[string]any{"output_index": index, "item": done})
	return done
}

func functionCall(e *sse, index int, c Call) map[string]any {
	itemID := "fc_" + c.ID
	item := map[string]any{"type": "function_call", "id": itemID, "call_id": c.ID, "name": c.Name, "arguments": "", "status": "in_progress"}
	if c.Namespace != "" {
		item["namespace"] = c.Namespace
	}
	e.send("response.output_item.added", map[string]any{"output_index": index, "item": item})
	for _, chunk := range Chunks(c.Arguments, 64) {
		e.send("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": index, "delta": chunk})
	}
	e.send("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": index, "arguments": c.Arguments})
	done := map[string]any{}
	for k, v := range item {
		done[k] = v
	}
	done["arguments"], done["status"] = c.Arguments, "completed"
	e.send("response.output_item.done", map[string]any{"output_index": index, "item": done})
	return done
}

// Chunks splits s into pieces of at most n bytes, on rune boundaries, as a
// stream sends them.
func Chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
