package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simjecture/simjecture/e2e/mockanthropic"
	"github.com/simjecture/simjecture/e2e/npmcli"
)

// claudeCLI is the Claude Code release the end-to-end tests drive (a
// native binary under node_modules/.bin), installed once with npm.
var claudeCLI = newPinnedCLI(npmcli.Package{Name: "@anthropic-ai/claude-code", Version: "2.1.332", Bin: "claude"})

// claudeKey is the API key the tests give Claude Code; no campaign file may
// hold it.
const claudeKey = "sk-ant-e2e-mock-key-0123456789abcdef"

// claudeEnv points Claude Code at the mock with the key; one retry of its
// own keeps a failing request short.
func claudeEnv(mock *mockanthropic.Server) []string {
	return []string{"ANTHROPIC_BASE_URL=" + mock.URL, "ANTHROPIC_API_KEY=" + claudeKey, "CLAUDE_CODE_MAX_RETRIES=1"}
}

// claudeStudy runs a claude study against mock until it stops.
func claudeStudy(t *testing.T, mock *mockanthropic.Server) (campaign, result) {
	t.Helper()
	exe := claudeCLI.get(t)
	c := newCampaign(t, "claude")
	reapMarker(t, c.dir)
	return c, runWith(t, claudeEnv(mock), 4*time.Minute, "study", "--campaign", c.dir,
		"--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "claude", "--executable", exe, "--model", "mock-model", "--judge-model", "mock-judge",
		"--execution-backend", "bubblewrap", "--wall-seconds", "300", "--turn-seconds", "120", "--batch")
}

// TestClaudeSmoke: the real Claude Code CLI talks to the mock at all, and
// asks for nothing but model requests.
func TestClaudeSmoke(t *testing.T) {
	t.Parallel()
	exe := claudeCLI.get(t)
	mock := mockanthropic.New(func(mockanthropic.Request) mockanthropic.Reply {
		return mockanthropic.Reply{Text: "hello from the mock", Usage: mockanthropic.Usage{Input: 11, Output: 7}}
	})
	defer mock.Close()
	home := t.TempDir()
	cmd := exec.Command(exe, "-p", "--output-format", "stream-json", "--verbose", "--model", "mock-model", "say hi")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), append(claudeEnv(mock), "HOME="+home, "CLAUDE_CONFIG_DIR="+home,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"type":"result"`) || !strings.Contains(string(out), "hello from the mock") ||
		!strings.Contains(string(out), `"input_tokens":11`) {
		t.Errorf("unexpected stream:\n%s", out)
	}
	if reqs := mock.Requests(); len(reqs) == 0 || reqs[0].Header.Get("X-Api-Key") != claudeKey {
		t.Errorf("the mock saw no request with the key")
	}
	if others := mock.Others(); len(others) > 0 {
		t.Errorf("Claude Code made requests besides the model's: %v", others)
	}
}

// TestClaudeStudyCompletes is the must-show of the claude backend: the
// real Claude Code CLI, driven by a scripted mock of the Messages API,
// runs a whole study. Worker turn 1 writes sim.py with Claude Code's Write
// tool and queues it with the MCP run tool; worker turn 2 resumes the same
// session (its request carries turn 1's messages) and asks for review with
// the MCP review tool; the reviewer, a fresh session without lab tools,
// approves; the study completes, and no campaign file holds the key.
func TestClaudeStudyCompletes(t *testing.T) {
	t.Parallel()
	mock := mockanthropic.New(mockanthropic.Research)
	defer mock.Close()
	c, r := claudeStudy(t, mock)
	logClaudeConversation(t, mock)
	checkRootSupported(t, c.dir, r)
	worker, reviewer := checkClaudeConversation(t, mock.Requests())
	checkClaudeSessions(t, c.dir, worker, reviewer)
	checkNoKey(t, c.dir, claudeKey, r.stdout+r.stderr)
	checkClaudeUsage(t, c.dir)
	if v := sj(t, "", "verify", "--campaign", c.dir); v.code != 0 {
		t.Errorf("verify: %s", v)
	}
}

// logClaudeConversation logs one line per request the mock answered (seen
// with -v or on failure), and every other request.
func logClaudeConversation(t *testing.T, mock *mockanthropic.Server) {
	t.Helper()
	for _, r := range mock.Requests() {
		t.Logf("request %d: model %s, session %s, %d messages, last result %q, %d tools", r.Seq, r.Model,
			r.Header.Get("X-Claude-Code-Session-Id"), len(r.Messages), r.LastResult(), len(r.Tools))
	}
	for _, o := range mock.Others() {
		t.Logf("other request: %s", o)
	}
}

// checkClaudeConversation checks what Claude Code sent: the lab tools to
// the worker only, turn 2 in turn 1's session with its messages, the
// reviewer in a session of its own with the judge model and no lab tools.
// It returns the worker's and the reviewer's session.
func checkClaudeConversation(t *testing.T, reqs []mockanthropic.Request) (string, string) {
	t.Helper()
	first, resumed, reviewer, ok := threeTurns(t, reqs, func(r mockanthropic.Request) bool { return r.Mentions(mockanthropic.ReviewerMarker) },
		func(r mockanthropic.Request) bool { return r.Called(mockanthropic.CallRun) && r.LastResult() == "" })
	if !ok {
		return "", ""
	}
	session := func(r mockanthropic.Request) string { return r.Header.Get("X-Claude-Code-Session-Id") }
	w1, w2, rv := reqs[first], reqs[resumed], reqs[reviewer]
	if !w1.HasTool(mockanthropic.LabPrefix+"run") || !w1.HasTool(mockanthropic.LabPrefix+"review") {
		t.Errorf("worker requests do not offer the lab MCP tools: %v", w1.Tools)
	}
	if w1.Model != "mock-model" || rv.Model != "mock-judge" {
		t.Errorf("models: worker %q, reviewer %q; want mock-model, mock-judge", w1.Model, rv.Model)
	}
	if session(w1) == "" || session(w2) != session(w1) {
		t.Errorf("turn 2 ran in session %q, want turn 1's %q (resumed)", session(w2), session(w1))
	}
	if !w2.Mentions("# Hypothesis") || !w2.Called(mockanthropic.CallWrite) {
		t.Errorf("the resumed turn's request does not carry turn 1's messages")
	}
	if out, _ := w2.Result(mockanthropic.CallRun); !strings.Contains(out, `"ok":true`) {
		t.Errorf("the MCP run call did not succeed: %s", out)
	}
	if session(rv) == session(w1) || rv.HasTool(mockanthropic.LabPrefix+"run") || rv.Called(mockanthropic.CallRun) {
		t.Errorf("the reviewer must be a fresh session without lab tools (session %q, worker %q, tools %v)", session(rv), session(w1), rv.Tools)
	}
	read := false
	for _, r := range reqs[reviewer:] {
		out, ok := r.Result(mockanthropic.CallRead)
		read = read || ok && strings.Contains(out, "max_abs_diff")
	}
	if !read {
		t.Errorf("the reviewer did not read the collected result.json with its Read tool")
	}
	return session(w1), session(rv)
}

// checkClaudeSessions: Claude Code kept the worker's session in the
// study's own configuration folder (which is what --resume reads, so the
// operator's ~/.claude was never used) and nothing of the reviewer's.
func checkClaudeSessions(t *testing.T, dir, worker, reviewer string) {
	t.Helper()
	kept, _ := filepath.Glob(filepath.Join(dir, "supervisor", "agent-state", "config", "projects", "*", worker+".jsonl"))
	if len(kept) != 1 {
		t.Errorf("the worker session %s is not in the study's configuration folder", worker)
	}
	leaked, _ := filepath.Glob(filepath.Join(dir, "supervisor", "*", "*", "*", "projects", "*", reviewer+".jsonl"))
	if len(leaked) > 0 {
		t.Errorf("the reviewer session was kept: %v", leaked)
	}
}

// checkClaudeUsage: the turns' token figures come from the stream's result
// events.
func checkClaudeUsage(t *testing.T, dir string) {
	t.Helper()
	snap := usageOf(t, sj(t, "", "status", "--campaign", dir, "--json").stdout)
	if snap.AgentBackend != "claude" || snap.Usage.InputTokens == nil || *snap.Usage.InputTokens == 0 ||
		snap.Usage.OutputTokens == nil || *snap.Usage.OutputTokens == 0 {
		t.Errorf("snapshot: backend %q, usage %+v; want claude and the stream's token counts", snap.AgentBackend, snap.Usage)
	}
	if snap.RecordProtection != "enclosed" {
		t.Errorf("record_protection %q: the Claude Code turns were meant to run enclosed (their state folder writable)", snap.RecordProtection)
	}
}

// TestClaudeOverloadIsRetried: the Messages API answers 529 overloaded to
// the first requests, so turn 1 fails after Claude Code's own retry; the
// supervisor retries it after a backoff and the study still completes.
func TestClaudeOverloadIsRetried(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	mock := mockanthropic.New(func(r mockanthropic.Request) mockanthropic.Reply {
		if n.Add(1) <= 2 {
			return mockanthropic.Reply{Status: 529, Error: "Overloaded"}
		}
		return mockanthropic.Research(r)
	})
	defer mock.Close()
	c, r := claudeStudy(t, mock)
	checkCompletedAfterRetry(t, c.dir, r)
	sessions := map[string]bool{}
	for _, req := range mock.Requests() {
		if !req.Mentions(mockanthropic.ReviewerMarker) {
			sessions[req.Header.Get("X-Claude-Code-Session-Id")] = true
		}
	}
	if len(sessions) != 1 {
		t.Errorf("the worker ran in %d sessions, want one: the retry resumes the session of the failed turn", len(sessions))
	}
}

// TestClaudeAuthFailurePauses: a server that refuses the key stops the
// study for the operator, classified from the stream's error events.
func TestClaudeAuthFailurePauses(t *testing.T) {
	t.Parallel()
	mock := mockanthropic.New(func(mockanthropic.Request) mockanthropic.Reply {
		return mockanthropic.Reply{Status: 401, Error: "invalid x-api-key"}
	})
	defer mock.Close()
	c, r := claudeStudy(t, mock)
	checkNeedsOperator(t, c.dir, r, "authentication")
	checkNoKey(t, c.dir, claudeKey, r.stdout+r.stderr)
}
