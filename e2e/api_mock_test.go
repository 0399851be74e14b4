package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// llmMock is a scripted OpenAI-compatible chat-completions endpoint on
// 127.0.0.1 for the api backend. Its "model" is a tiny research agent that
// decides from the request alone: a fresh worker turn asks for lab status;
// with no experiment it writes testdata/api_cubes.py and queues it; with a
// succeeded experiment and no review it asks for review of root as
// supported; otherwise it ends the turn. A request without tools is the
// reviewer, which approves what the packet asks. Faults replace the answer
// to chosen fresh worker requests (the first request of a worker turn:
// its last message is the turn's prompt, after the stored conversation).
type llmMock struct {
	srv    *httptest.Server
	key    string
	source string
	quit   chan struct{}

	mu     sync.Mutex
	faults map[int]string // fresh worker request number (from 1) → fault
	fresh  int
	// midFaults: in-turn worker request number (from 1: a request after a
	// tool result) → fault; chatty: fresh worker turns up to this number
	// leave a long note instead of working.
	midFaults map[int]string
	inTurn    int
	chatty    int
	log       []llmRequest // every worker request, in order
	reviews   []llmRequest // every reviewer request
	requests  int
	served    int // answers streamed in full (each reports 100 prompt / 20 completion tokens)
	badAuth   int
}

func newLLMMock(t *testing.T, key string, faults map[int]string) *llmMock {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "api_cubes.py"))
	if err != nil {
		t.Fatal(err)
	}
	m := &llmMock{key: key, source: string(src), quit: make(chan struct{}), faults: faults}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve)) // listens on 127.0.0.1 only
	t.Cleanup(m.srv.Close)
	t.Cleanup(func() { close(m.quit) }) // runs first: releases a hung handler
	return m
}

// connectionFile writes the api connection file (mode 0600) for the mock.
func (m *llmMock) connectionFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "connection.json")
	body, _ := json.Marshal(map[string]string{"base_url": m.srv.URL + "/v1", "api_key": m.key})
	if err := os.WriteFile(p, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (m *llmMock) counts() (requests, served, badAuth int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests, m.served, m.badAuth
}

// llmRequest is what the mock reads of a request.
type llmRequest struct {
	Model    string       `json:"model"`
	Messages []llmMessage `json:"messages"`
	Tools    []any        `json:"tools"`
}

type llmMessage struct {
	Role       string        `json:"role"`
	Content    any           `json:"content"`
	ToolCalls  []llmToolCall `json:"tool_calls"`
	ToolCallID string        `json:"tool_call_id"`
}

type llmToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (msg llmMessage) text() string {
	s, _ := msg.Content.(string)
	return s
}

func (m *llmMock) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req llmRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request body"}}`, http.StatusBadRequest)
		return
	}
	fault, ok := m.admit(r, req)
	switch {
	case !ok:
		llmError(w, http.StatusUnauthorized, "missing or wrong bearer token", "invalid_api_key")
	case fault != "":
		m.fault(w, r, fault)
	default:
		text, calls := m.decide(req)
		llmStream(w, text, calls)
		m.mu.Lock()
		m.served++
		m.mu.Unlock()
	}
}

// admit counts the request, checks the bearer token and picks its fault.
func (m *llmMock) admit(r *http.Request, req llmRequest) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
	if r.Header.Get("Authorization") != "Bearer "+m.key {
		m.badAuth++
		return "", false
	}
	if len(req.Tools) == 0 {
		m.reviews = append(m.reviews, req)
		return "", true // a reviewer
	}
	m.log = append(m.log, req)
	if req.Messages[len(req.Messages)-1].Role != "user" {
		m.inTurn++
		return m.midFaults[m.inTurn], true
	}
	m.fresh++
	return m.faults[m.fresh], true
}

// fault answers with the named fault: 429, 500, 503, cut, hang, 401, 402, 403 or 429quota.
func (m *llmMock) fault(w http.ResponseWriter, r *http.Request, name string) {
	switch name {
	case "429":
		llmError(w, 429, "Rate limit reached for requests", "rate_limit_exceeded")
	case "500":
		llmError(w, 500, "The server had an error while processing your request", "server_error")
	case "503":
		llmError(w, 503, "Server overloaded, please try again later", "overloaded")
	case "401":
		llmError(w, 401, "Incorrect API key provided: "+m.key, "invalid_api_key")
	case "402":
		llmError(w, 402, "Insufficient Balance", "insufficient_balance")
	case "403":
		llmError(w, 403, "The model `m` does not exist or you do not have access to it (model not found)", "model_not_found")
	case "429quota":
		llmError(w, 429, "You exceeded your current quota, please check your plan and billing details", "insufficient_quota")
	case "cut":
		s := llmSSE(w)
		s.send(llmChunk(map[string]any{"role": "assistant", "content": "Let me chec"}, nil))
		panic(http.ErrAbortHandler) // drops the connection mid-response
	case "hang":
		llmSSE(w)
		t := time.NewTimer(time.Minute) // bounded even if nobody hangs up
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-m.quit:
		case <-t.C:
		}
	default:
		llmError(w, 500, "unknown mock fault "+name, "mock")
	}
}

func llmError(w http.ResponseWriter, code int, msg, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": typ}})
	_, _ = w.Write(b)
}

// llmCall is a tool call the mock makes.
type llmCall struct {
	name string
	args any
}

// decide is the mock model's answer: text and tool calls.
func (m *llmMock) decide(req llmRequest) (string, []llmCall) {
	last := req.Messages[len(req.Messages)-1]
	switch {
	case len(req.Tools) == 0:
		return reviewerAnswer(last.text())
	case last.Role != "tool":
		return "", []llmCall{{"status", map[string]any{}}}
	case lastCallWas(req.Messages, "status") && m.chattyTurn():
		return "", []llmCall{{"note", map[string]any{"statement": chattyNote}}}
	case lastCallWas(req.Messages, "status"):
		return m.next(last.text())
	}
	return "Work recorded; ending this turn. (Quoting an HTTP 401 or \"quota exhausted\" in my own words is not an error.)", nil
}

// chattyNote is the long note of a chatty turn.
var chattyNote = "A long working note that only fills the conversation. " + strings.Repeat("0123456789", 150)

func (m *llmMock) chattyTurn() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fresh <= m.chatty
}

// requestsSeen returns the worker and the reviewer requests received so far.
func (m *llmMock) requestsSeen() (workers, reviewers []llmRequest) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llmRequest(nil), m.log...), append([]llmRequest(nil), m.reviews...)
}

// lastCallWas reports whether the last assistant message called only name.
func lastCallWas(msgs []llmMessage, name string) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			c := msgs[i].ToolCalls
			return len(c) == 1 && c[0].Function.Name == name
		}
	}
	return false
}

// next picks the worker's action from the lab status result.
func (m *llmMock) next(statusJSON string) (string, []llmCall) {
	var st struct {
		Result struct {
			Experiments []struct{ ID, Status string } `json:"experiments"`
			Reviews     []struct{ ID string }         `json:"reviews"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(statusJSON), &st); err != nil {
		return "I could not read the lab status: " + err.Error(), nil
	}
	exps := st.Result.Experiments
	switch {
	case len(exps) == 0:
		return "I will check the identity numerically.", []llmCall{
			{"write_file", map[string]any{"path": "cubes.py", "content": m.source}},
			{"run", map[string]any{"source": "cubes.py", "args": []string{"--n", "30", "--out", "result.json"},
				"outputs": []string{"result.json"}, "timeout": 60, "purpose": "check the identity up to n=30",
				"resources": map[string]any{"cpus": 1, "memory_mb": 256, "max_file_mb": 16}}},
		}
	case exps[0].Status != "succeeded":
		return "The experiment is " + exps[0].Status + "; ending the turn.", nil
	case len(st.Result.Reviews) == 0:
		id := exps[0].ID
		return "", []llmCall{{"review", map[string]any{"claim": "root", "disposition": "supported",
			"conclusion": "sum k^3 = (n(n+1)/2)^2 holds for every n <= 30", "experiments": []string{id},
			"challenge": map[string]any{"strategy": "checked every n up to 30, not only the last", "experiments": []string{id},
				"outcome": "max_abs_diff is 0"}}}}
	}
	return "A review is pending; ending the turn.", nil
}

// reviewerAnswer approves the requested disposition, the verdict in a
// multi-line fenced block after some prose.
func reviewerAnswer(packet string) (string, []llmCall) {
	var p struct {
		ClaimID     string `json:"claim_id"`
		Disposition string `json:"disposition"`
	}
	_ = json.Unmarshal([]byte(packet), &p)
	v, _ := json.MarshalIndent(map[string]any{"claim_id": p.ClaimID, "decision": "approved", "disposition": p.Disposition,
		"rationale": "The receipt shows max_abs_diff 0 for every n up to 30.", "evidence_gaps": []string{}, "next_test": nil}, "", "  ")
	return "I re-read the receipt and its artifact.\n```json\n" + string(v) + "\n```\n", nil
}

// llmStream streams text and tool calls (arguments split across chunks),
// a usage chunk and [DONE].
func llmStream(w http.ResponseWriter, text string, calls []llmCall) {
	s := llmSSE(w)
	s.send(llmChunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for i := 0; i < len(text); i += 16 {
		s.send(llmChunk(map[string]any{"content": text[i:min(i+16, len(text))]}, nil))
	}
	for i, c := range calls {
		args, _ := json.Marshal(c.args)
		s.send(llmChunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i),
			"type": "function", "function": map[string]any{"name": c.name, "arguments": ""}}}}, nil))
		for j := 0; j < len(args); j += 40 {
			s.send(llmChunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": string(args[j:min(j+40, len(args))])}}}}, nil))
		}
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	s.send(llmChunk(map[string]any{}, finish))
	s.send(map[string]any{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

type llmWriter struct{ w http.ResponseWriter }

func llmSSE(w http.ResponseWriter) llmWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, ": mock keep-alive\n\n")
	w.(http.Flusher).Flush()
	return llmWriter{w}
}

func (s llmWriter) send(v any) {
	b, _ := json.Marshal(v)
	_, _ = fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.w.(http.Flusher).Flush()
}

func llmChunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}
