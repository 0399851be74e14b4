// Package mockresponses is a scripted stand-in for the OpenAI Responses API
// (POST /v1/responses with "stream": true), served on 127.0.0.1 for the
// end-to-end tests that drive the real Codex CLI.
//
// Each request is decoded into a [Request] and handed to the test's
// [Script], whose [Reply] — assistant text, function calls, or an HTTP
// failure — is streamed back as server-sent events in the order the API
// sends them: response.created, response.in_progress, then per output item
// response.output_item.added, its deltas (response.output_text.delta /
// response.function_call_arguments.delta) and .done events and
// response.output_item.done, and finally response.completed with usage.
// docs/codex.md records what Codex sends and accepts.
package mockresponses

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Script decides the reply to one request. It may be called concurrently.
type Script func(Request) Reply

// Reply is one model response.
type Reply struct {
	Text  string // an assistant message, if not empty
	Calls []Call // function calls, after the text
	// WebSearch, if not empty, is the query of a hosted web search the
	// model made (a web_search_call output item), before the text.
	WebSearch string
	Usage     Usage
	Status    int // an HTTP error status instead of a response (with Error as its message)
	Error     string
}

// Call is one function call the model makes.
type Call struct {
	ID        string // call_id
	Namespace string // e.g. "mcp__simjecture" for an MCP server's tools; empty for built-in tools
	Name      string
	Arguments string // JSON
}

// Usage is the token usage reported in response.completed.
type Usage struct{ Input, Output int64 }

// Server is a running mock.
type Server struct {
	// URL is the base URL to configure as the provider's base_url (ends in /v1).
	URL    string
	srv    *httptest.Server
	script Script

	log Log[Request]
}

// Log keeps the requests a mock received, oldest first (both mocks use it).
type Log[R any] struct {
	mu   sync.Mutex
	reqs []R
}

// Add keeps r, numbered from 1 by number, and returns its number.
func (l *Log[R]) Add(r R, number func(*R, int)) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.reqs) + 1
	number(&r, n)
	l.reqs = append(l.reqs, r)
	return n
}

// All returns the requests kept so far, oldest first.
func (l *Log[R]) All() []R {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]R(nil), l.reqs...)
}

// New starts a mock on a loopback port.
func New(script Script) *Server {
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request { return s.log.All() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := decode(body, r.Header)
	if err != nil {
		http.Error(w, `{"error":{"message":"malformed request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req.Seq = s.log.Add(req, func(r *Request, n int) { r.Seq = n })
	id := fmt.Sprintf("resp_%04d", req.Seq)
	reply := s.script(req)
	if reply.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		msg, _ := json.Marshal(reply.Error)
		fmt.Fprintf(w, `{"error":{"message":%s,"type":"mock_error","code":null}}`, msg)
		return
	}
	stream(w, id, req.Model, reply)
}

// Request is one decoded request body, with the headers Codex sent.
type Request struct {
	Seq    int // 1 for the first request the server received
	Header http.Header
	Model  string
	Input  []Item
	Tools  []Tool
	Raw    json.RawMessage
}

// Item is one input item: a message (Role, Text), a function call (CallID,
// Namespace, Name, Arguments) or a function call's output (CallID, Output).
type Item struct {
	Type      string
	Role      string
	Text      string
	CallID    string
	Namespace string
	Name      string
	Arguments string
	Output    string
}

// Tool is one tool offered to the model; a namespace holds its own tools.
type Tool struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Tools []Tool `json:"tools"`
}

// Thread is the Codex thread the request belongs to (its session header).
func (r Request) Thread() string {
	if t := r.Header.Get("Thread-Id"); t != "" {
		return t
	}
	return r.Header.Get("Session-Id")
}

// Last is the last input item.
func (r Request) Last() Item {
	if len(r.Input) == 0 {
		return Item{}
	}
	return r.Input[len(r.Input)-1]
}

// Output returns the output of the call with this call_id, if the input holds it.
func (r Request) Output(callID string) (string, bool) {
	for _, it := range r.Input {
		if it.Type == "function_call_output" && it.CallID == callID {
			return it.Output, true
		}
	}
	return "", false
}

// Mentions reports whether any message of the input contains s.
func (r Request) Mentions(s string) bool {
	for _, it := range r.Input {
		if it.Type == "message" && strings.Contains(it.Text, s) {
			return true
		}
	}
	return false
}

// HasTool reports whether a tool (namespace "" for a top-level one) is offered.
func (r Request) HasTool(namespace, name string) bool {
	for _, t := range r.Tools {
		if namespace == "" && t.Name == name {
			return true
		}
		if t.Type == "namespace" && t.Name == namespace {
			for _, inner := range t.Tools {
				if inner.Name == name {
					return true
				}
			}
		}
	}
	return false
}
