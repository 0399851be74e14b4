package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
)

func agentFor(m *mockServer) *Agent {
	return New(Config{BaseURL: m.srv.URL + "/v1", APIKey: testKey})
}

// toolLog records the lab calls a worker turn made.
type toolLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *toolLog) call(_ context.Context, name string, args []byte) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, name+" "+string(args))
	return `{"ok":true,"result":{"id":"exp_1","status":"queued"}}`, nil
}

func workerTurn(t *testing.T, timeout time.Duration, l *toolLog) provider.Turn {
	t.Helper()
	dir := t.TempDir()
	research := filepath.Join(dir, "research")
	if err := os.Mkdir(research, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := []provider.Tool{{Name: "run", Description: "queue", Parameters: map[string]any{"type": "object"}}}
	return provider.Turn{Role: provider.RoleWorker, Number: 1, Prompt: "plan the study", Dir: research,
		LogDir: filepath.Join(dir, "log"), Timeout: timeout, Model: "m", Tools: tools, CallTool: l.call, Study: dir}
}

func TestWorkerLoopRunsToolsSplitAcrossChunks(t *testing.T) {
	t.Parallel()
	m := newMock(t,
		answer("Writing the program.", true,
			call{"call_a", "write_file", []string{`{"path":"sim`, `.py","content":"print(1)`, `\n"}`}},
			call{"call_b", "run", []string{`{"source":"si`, `m.py","outputs":["r.json"]`, `}`}}),
		answer("Queued; ending the turn.\nDONE for now", true))
	var l toolLog
	turn := workerTurn(t, 10*time.Second, &l)
	out, err := agentFor(m).RunTurn(context.Background(), turn)
	if err != nil || out.Failure != nil || out.TimedOut {
		t.Fatalf("RunTurn = %+v, %v", out, err)
	}
	if want := []string{`run {"source":"sim.py","outputs":["r.json"]}`}; strings.Join(l.calls, "|") != want[0] {
		t.Errorf("lab calls = %q, want %q", l.calls, want)
	}
	if b, err := os.ReadFile(filepath.Join(turn.Dir, "sim.py")); err != nil || string(b) != "print(1)\n" {
		t.Errorf("write_file left %q, %v", b, err)
	}
	if out.LastLine != "DONE for now" {
		t.Errorf("LastLine = %q", out.LastLine)
	}
	if out.InputTokens == nil || *out.InputTokens != 20 || out.OutputTokens == nil || *out.OutputTokens != 10 {
		t.Errorf("usage = %v/%v, want 20/10 summed over two requests", deref(out.InputTokens), deref(out.OutputTokens))
	}
	checkSecondRequest(t, m.requests())
	for _, a := range m.auth {
		if a != "Bearer "+testKey {
			t.Errorf("Authorization = %q", a)
		}
	}
}

// checkSecondRequest wants the tool calls echoed and their results fed back.
func checkSecondRequest(t *testing.T, reqs []mockRequest) {
	t.Helper()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first, second := reqs[0], reqs[1]
	if !first.Stream || !first.StreamOptions.IncludeUsage || len(first.Tools) != 4 {
		t.Errorf("first request: stream %v, include_usage %v, %d tools (want run + 3 file tools)",
			first.Stream, first.StreamOptions.IncludeUsage, len(first.Tools))
	}
	roles := []string{}
	for _, msg := range second.Messages {
		roles = append(roles, msg.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,tool" {
		t.Fatalf("second request roles = %s", got)
	}
	asst := second.Messages[2]
	if len(asst.ToolCalls) != 2 || asst.ToolCalls[1].Function.Arguments != `{"source":"sim.py","outputs":["r.json"]}` {
		t.Errorf("echoed tool calls = %+v", asst.ToolCalls)
	}
	if second.Messages[3].ToolCallID != "call_a" || second.Messages[4].ToolCallID != "call_b" {
		t.Errorf("tool results answer %q, %q", second.Messages[3].ToolCallID, second.Messages[4].ToolCallID)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestReviewerIsToolFreeAndVerdictIsOneLine(t *testing.T) {
	t.Parallel()
	verdict := "The evidence holds.\n```json\n{\n  \"claim_id\": \"root\",\n  \"decision\": \"approved\"\n}\n```\n"
	m := newMock(t, answer(verdict, false))
	dir := t.TempDir()
	turn := provider.Turn{Role: provider.RoleReviewer, Number: 1, Prompt: `{"claim_id":"root"}`, Dir: dir,
		LogDir: filepath.Join(dir, "log"), Timeout: 10 * time.Second, Model: "judge"}
	out, err := agentFor(m).RunTurn(context.Background(), turn)
	if err != nil || out.Failure != nil {
		t.Fatalf("RunTurn = %+v, %v", out, err)
	}
	if out.LastLine != `{"claim_id":"root","decision":"approved"}` {
		t.Errorf("LastLine = %q", out.LastLine)
	}
	if out.InputTokens != nil {
		t.Errorf("usage without a usage chunk = %v, want unknown (nil)", *out.InputTokens)
	}
	req := m.requests()[0]
	if len(req.Tools) != 0 || req.Model != "judge" || len(req.Messages) != 2 {
		t.Errorf("reviewer request: %d tools, model %q, %d messages; want tool-free, judge, fresh", len(req.Tools), req.Model, len(req.Messages))
	}
}

func TestVerdictLine(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"thinking\n{\"a\": 1}\n":        `{"a": 1}`,
		"{\n \"a\": 1\n}":               `{"a":1}`,
		"x\n```json\n{\"a\":\n 2}\n```": `{"a":2}`,
		"no verdict here\nlast":         "last",
		"":                              "",
	}
	for in, want := range cases {
		if got := verdictLine(in); got != want {
			t.Errorf("verdictLine(%q) = %q, want %q", in, got, want)
		}
	}
}
