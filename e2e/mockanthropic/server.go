// Package mockanthropic is a scripted stand-in for the Anthropic Messages
// API (POST /v1/messages, streamed or not), served on 127.0.0.1 for the
// end-to-end tests that drive the real Claude Code CLI.
//
// Each model request is decoded into a [Request] and handed to the test's
// [Script], whose [Reply] — assistant text, tool_use blocks, or an HTTP
// failure — is streamed back as server-sent events in the order the API
// sends them: message_start, per content block content_block_start, its
// deltas (text_delta / input_json_delta) and content_block_stop, then
// message_delta with the stop reason and usage, and message_stop. Every
// other request the CLI makes is recorded ([Server.Others]) and answered
// as the API would: token counting with a count, anything else 404.
// docs/claude.md records what Claude Code sends.
package mockanthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/simjecture/simjecture/e2e/mockresponses"
)

// Script decides the reply to one request. It may be called concurrently.
type Script func(Request) Reply

// Reply is one model response.
type Reply struct {
	Text  string // an assistant text block, if not empty
	Calls []Call // tool_use blocks, after the text
	Usage Usage
	// Status is an HTTP error status instead of a response, with Error as
	// its message; DropStream ends the stream after its first block, as a
	// dropped connection would.
	Status     int
	Error      string
	DropStream bool
}

// Call is one tool_use block.
type Call struct {
	ID    string
	Name  string // e.g. "mcp__simjecture__run"
	Input string // JSON object
}

// Usage is the token usage reported in message_start and message_delta.
type Usage struct{ Input, Output int64 }

// Server is a running mock.
type Server struct {
	// URL is the base URL to give as ANTHROPIC_BASE_URL (no /v1).
	URL    string
	srv    *httptest.Server
	script Script

	log    mockresponses.Log[Request]
	others mockresponses.Log[string]
}

// New starts a mock on a loopback port.
func New(script Script) *Server {
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests returns the model requests received so far, oldest first.
func (s *Server) Requests() []Request { return s.log.All() }

// Others returns "METHOD PATH" of every request that was not a model
// request, oldest first.
func (s *Server) Others() []string { return s.others.All() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		s.other(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	req, err := decode(body, r.Header)
	if err != nil {
		apiError(w, http.StatusBadRequest, "malformed request")
		return
	}
	req.Seq = s.log.Add(req, func(r *Request, n int) { r.Seq = n })
	id := fmt.Sprintf("msg_mock_%04d", req.Seq)
	reply := s.script(req)
	switch {
	case reply.Status != 0:
		apiError(w, reply.Status, reply.Error)
	case req.Stream:
		stream(w, id, req.Model, reply)
	default:
		whole(w, id, req.Model, reply)
	}
}

// other records a request that is not a model request and answers it.
func (s *Server) other(w http.ResponseWriter, r *http.Request) {
	s.others.Add(r.Method+" "+r.URL.Path, func(*string, int) {})
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":1000}`)
		return
	}
	apiError(w, http.StatusNotFound, "not found: "+r.URL.Path)
}

// errorTypes is the API's error type for each status it uses.
var errorTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error",
	404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
}

func apiError(w http.ResponseWriter, status int, msg string) {
	typ, ok := errorTypes[status]
	if !ok {
		typ = "api_error"
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Should-Retry", fmt.Sprint(status == 429 || status >= 500))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
