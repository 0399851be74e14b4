package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// mockServer is a scripted OpenAI-compatible endpoint on 127.0.0.1: each
// request gets the next step of the script (the last step repeats).
type mockServer struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	steps []step
	reqs  []mockRequest
	auth  []string
	quit  chan struct{}
}

type step func(w http.ResponseWriter, r *http.Request, quit <-chan struct{})

// mockRequest is the part of a chat-completions request the tests read.
type mockRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func newMock(t *testing.T, steps ...step) *mockServer {
	m := &mockServer{t: t, steps: steps, quit: make(chan struct{})}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	t.Cleanup(func() { close(m.quit) }) // runs first: releases hung handlers
	return m
}

func (m *mockServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	var req mockRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, req)
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	s := m.steps[min(n, len(m.steps)-1)]
	m.mu.Unlock()
	s(w, r, m.quit)
}

func (m *mockServer) requests() []mockRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]mockRequest(nil), m.reqs...)
}

// sse writes one data line per chunk, then [DONE] unless cut.
type sse struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, ": keep-alive\n\n")
	return sse{w}
}

func (s sse) send(v any) {
	b, _ := json.Marshal(v)
	_, _ = fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.w.(http.Flusher).Flush()
}

func (s sse) done() { _, _ = io.WriteString(s.w, "data: [DONE]\n\n") }

func chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

func usageChunk(in, out int) map[string]any {
	return map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}}
}

// call is a scripted tool call whose arguments arrive in pieces.
type call struct {
	id, name string
	pieces   []string
}

// answer streams text in small pieces, then the tool calls (arguments split
// across chunks), usage and [DONE].
func answer(text string, usage bool, calls ...call) step {
	return func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
		s := startSSE(w)
		s.send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for i := 0; i < len(text); i += 7 {
			s.send(chunk(map[string]any{"content": text[i:min(i+7, len(text))]}, nil))
		}
		for i, c := range calls {
			s.send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": ""}}}}, nil))
			for _, p := range c.pieces {
				s.send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil))
			}
		}
		finish := "stop"
		if len(calls) > 0 {
			finish = "tool_calls"
		}
		s.send(chunk(map[string]any{}, finish))
		if usage {
			s.send(usageChunk(10, 5))
		}
		s.done()
	}
}

// status answers with an HTTP error.
func status(code int, body string) step {
	return func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// cut starts a stream and drops the connection mid-response.
func cut(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
	s := startSSE(w)
	s.send(chunk(map[string]any{"role": "assistant", "content": "half an ans"}, nil))
	panic(http.ErrAbortHandler)
}

// eofEarly ends the stream cleanly, but before [DONE].
func eofEarly(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
	s := startSSE(w)
	s.send(chunk(map[string]any{"role": "assistant", "content": "half an ans"}, nil))
}

// errorEvent sends an error object inside a 200 stream.
func errorEvent(msg string) step {
	return func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
		s := startSSE(w)
		s.send(map[string]any{"error": map[string]any{"message": msg}})
	}
}

// hang starts a stream and sends nothing more until the client goes away.
func hang(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
	startSSE(w).w.(http.Flusher).Flush()
	select {
	case <-r.Context().Done():
	case <-quit:
	}
}
