package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/simjecture/simjecture/e2e/mockresponses"
	"github.com/simjecture/simjecture/e2e/npmcli"
)

// codexCLI is the Codex CLI release the end-to-end tests drive. It is
// installed once with npm into its Dir and reused.
var codexCLI = newPinnedCLI(npmcli.Package{Name: "@openai/codex", Version: "0.169.0", Bin: "codex"})

// codex returns the path of the installed Codex CLI.
func codex(t *testing.T) string { return codexCLI.get(t) }

func lastLines(s string, n int) string {
	l := lines(s)
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, " | ")
}

// codexHome is a CODEX_HOME of the test's own whose config.toml points
// Codex at the mock Responses API, so nothing of the user's is touched.
func codexHome(t *testing.T, baseURL string) (string, []string) {
	t.Helper()
	home := t.TempDir()
	config := fmt.Sprintf(`model_provider = "mock"

[model_providers.mock]
name = "simjecture e2e mock"
base_url = %q
wire_api = "responses"
env_key = "MOCK_OPENAI_API_KEY"
request_max_retries = 1
stream_max_retries = 1
`, baseURL)
	writeFile(t, filepath.Join(home, "config.toml"), config)
	// Codex runs its shell commands as login shells, which read $HOME's
	// profile: the operator's (a pyenv rehash, say, that waits a minute on
	// a lock a killed shell left) must not decide how long a turn takes.
	userHome := t.TempDir()
	return home, []string{"CODEX_HOME=" + home, "HOME=" + userHome, "MOCK_OPENAI_API_KEY=sk-mock-not-a-secret"}
}

// runWith runs the binary with extra environment variables, at most timeout.
func runWith(t *testing.T, extraEnv []string, timeout time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(env(), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("simjecture %s: %v", strings.Join(args, " "), err)
	}
	r.code = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		t.Fatalf("simjecture %s did not finish within %v:\n%s", strings.Join(args, " "), timeout, r)
	}
	return r
}

// TestCodexSmoke: the real Codex CLI talks to the mock at all.
func TestCodexSmoke(t *testing.T) {
	t.Parallel()
	exe := codex(t)
	mock := mockresponses.New(func(mockresponses.Request) mockresponses.Reply {
		return mockresponses.Reply{Text: "hello from the mock", Usage: mockresponses.Usage{Input: 11, Output: 7}}
	})
	defer mock.Close()
	cmd := exec.Command(exe, "exec", "--json", "--skip-git-repo-check", "--model", "mock-model", "say hi")
	cmd.Dir = t.TempDir()
	_, homeEnv := codexHome(t, mock.URL)
	cmd.Env = append(os.Environ(), homeEnv...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}
	var types []string
	for _, l := range lines(string(out)) {
		var ev struct{ Type string }
		if json.Unmarshal([]byte(l), &ev) == nil {
			types = append(types, ev.Type)
		}
	}
	got := strings.Join(types, " ")
	if !strings.HasPrefix(got, "thread.started") || !strings.HasSuffix(got, "turn.completed") ||
		!strings.Contains(string(out), `"text":"hello from the mock"`) || !strings.Contains(string(out), `"input_tokens":11`) {
		t.Errorf("unexpected codex JSONL (%s):\n%s", got, out)
	}
	if reqs := mock.Requests(); len(reqs) == 0 || reqs[0].Header.Get("Authorization") != "Bearer sk-mock-not-a-secret" {
		t.Errorf("the mock saw no request with the provider's key")
	}
}

// TestCodexStudyCompletes is the must-show of the codex backend: the real
// Codex CLI, driven by a scripted mock of the Responses API, runs a whole
// study. Worker turn 1 writes sim.py through Codex's shell tool (leaving a
// note through "$SIMJECTURE_BIN" lab) and queues it with the MCP run tool;
// worker turn 2 resumes the same Codex thread and asks for review with the
// MCP review tool; the reviewer, a fresh read-only Codex session without
// lab tools, approves; the study completes.
func TestCodexStudyCompletes(t *testing.T) {
	t.Parallel()
	exe := codex(t)
	mock := mockresponses.New(mockresponses.Research)
	defer mock.Close()
	c := newCampaign(t, "codex")
	reapMarker(t, c.dir)
	home, homeEnv := codexHome(t, mock.URL)
	r := runWith(t, homeEnv, 4*time.Minute, "study", "--campaign", c.dir,
		"--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "codex", "--executable", exe, "--model", "mock-model", "--judge-model", "mock-judge",
		"--execution-backend", "bubblewrap", "--wall-seconds", "300", "--turn-seconds", "120", "--batch")
	checkRootSupported(t, c.dir, r)
	logConversation(t, mock.Requests())
	worker, reviewer := checkCodexConversation(t, mock.Requests())
	checkSessions(t, home, worker, reviewer)
	checkSameThread(t, c.dir)
	checkCodexRecord(t, c.dir)
}

// checkCodexConversation checks what Codex sent: the lab tools as MCP tools
// to the worker only, turn 2 on the thread of turn 1 with the whole earlier
// conversation, the reviewer on a thread of its own with the judge model,
// read-only. It returns the worker's and the reviewer's thread.
func checkCodexConversation(t *testing.T, reqs []mockresponses.Request) (string, string) {
	t.Helper()
	first, resumed, reviewer, ok := threeTurns(t, reqs, func(r mockresponses.Request) bool { return r.Mentions(mockresponses.ReviewerMarker) },
		func(r mockresponses.Request) bool {
			_, ran := r.Output(mockresponses.CallRun)
			return ran && r.Last().Type == "message"
		})
	if !ok {
		return "", ""
	}
	w1, w2, rv := reqs[first], reqs[resumed], reqs[reviewer]
	if !w1.HasTool(mockresponses.LabNamespace, "run") || !w1.HasTool(mockresponses.LabNamespace, "review") {
		t.Errorf("worker requests do not offer the lab MCP tools (namespace %s)", mockresponses.LabNamespace)
	}
	if w1.Model != "mock-model" || rv.Model != "mock-judge" {
		t.Errorf("models: worker %q, reviewer %q; want mock-model, mock-judge", w1.Model, rv.Model)
	}
	if w1.Thread() == "" || w2.Thread() != w1.Thread() {
		t.Errorf("turn 2 ran on thread %q, want turn 1's %q (resumed)", w2.Thread(), w1.Thread())
	}
	if !w2.Mentions("# Hypothesis") || !hasCall(w2, mockresponses.CallWrite) {
		t.Errorf("the resumed turn's request does not carry turn 1's conversation")
	}
	if rv.Thread() == w1.Thread() || rv.HasTool(mockresponses.LabNamespace, "run") || hasCall(rv, mockresponses.CallRun) {
		t.Errorf("the reviewer must be a fresh thread without lab tools (thread %q, worker %q)", rv.Thread(), w1.Thread())
	}
	if out, _ := w2.Output(mockresponses.CallWrite); !strings.Contains(out, `"ok":true`) {
		t.Errorf("the shell fallback's lab note did not succeed: %s", out)
	}
	// Codex's own turn metadata header says how it sandboxes each session.
	if meta := rv.Header.Get("X-Codex-Turn-Metadata"); meta != "" && !strings.Contains(meta, `"sandbox_mode":"read-only"`) {
		t.Errorf("the reviewer session is not read-only: %s", meta)
	}
	return w1.Thread(), rv.Thread()
}

// checkSessions: Codex keeps the worker's thread in CODEX_HOME/sessions
// (that is what resume reads) and nothing of the ephemeral reviewer.
func checkSessions(t *testing.T, home, worker, reviewer string) {
	t.Helper()
	var names []string
	_ = filepath.WalkDir(filepath.Join(home, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, d.Name())
		}
		return nil
	})
	all := strings.Join(names, " ")
	if !strings.Contains(all, worker) || strings.Contains(all, reviewer) {
		t.Errorf("sessions %q: want the worker thread %s kept and no trace of the reviewer thread %s", all, worker, reviewer)
	}
}

// logConversation logs one line per request the mock answered (seen with -v
// or on failure).
func logConversation(t *testing.T, reqs []mockresponses.Request) {
	t.Helper()
	for _, r := range reqs {
		last := r.Last()
		t.Logf("request %d: model %s, thread %s, %d input items, last %s %s%s", r.Seq, r.Model, r.Thread(), len(r.Input),
			last.Type, last.Role, last.CallID)
	}
}

func pick(cur, i int) int {
	if cur < 0 {
		return i
	}
	return cur
}

func hasCall(r mockresponses.Request, callID string) bool {
	for _, it := range r.Input {
		if it.Type == "function_call" && it.CallID == callID {
			return true
		}
	}
	return false
}

// checkSameThread reads the thread id Codex reported in each worker turn's
// JSONL: every turn continues the first turn's thread.
func checkSameThread(t *testing.T, dir string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "supervisor", "turn-*", "stdout.log"))
	if len(logs) < 2 {
		t.Fatalf("want at least two worker turns, found %d logs", len(logs))
	}
	var threads []string
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		m := regexp.MustCompile(`"type":"thread.started","thread_id":"([^"]+)"`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s has no thread.started event", l)
		}
		threads = append(threads, string(m[1]))
	}
	for i, th := range threads[1:] {
		if th != threads[0] {
			t.Errorf("worker turn %d ran on thread %s, turn 1 on %s", i+2, th, threads[0])
		}
	}
}

// checkCodexRecord reads the study record: usage from Codex's
// turn.completed, the note written through the shell fallback.
func checkCodexRecord(t *testing.T, dir string) {
	t.Helper()
	r := sj(t, "", "status", "--campaign", dir, "--json")
	snap := usageOf(t, r.stdout)
	if snap.AgentBackend != "codex" || snap.Usage.InputTokens == nil || *snap.Usage.InputTokens == 0 || snap.Usage.OutputTokens == nil {
		t.Errorf("snapshot: backend %q, usage %+v; want codex and Codex's token counts", snap.AgentBackend, snap.Usage)
	}
	if !strings.Contains(r.stdout, "note through the shell fallback") {
		t.Errorf("the note written with \"$SIMJECTURE_BIN\" lab note is not in the record")
	}
}

// turnLogs renders the agent's stdout and stderr logs for a failure message.
func turnLogs(dir string) string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(dir, "supervisor", "*", "std*.log"))
	for _, l := range logs {
		body, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "--- %s\n%s\n", l, lastLines(string(body), 15))
	}
	return b.String()
}

// TestMCPServerOverStdio drives `simjecture mcp` with the MCP SDK's client
// over the command transport: the tools are the lab calls, results are the
// lab's JSON, a refused call is a tool error, and closing stdin ends it.
func TestMCPServerOverStdio(t *testing.T) {
	t.Parallel()
	c := pausedStudy(t)
	cmd := exec.Command(bin, "mcp", "--campaign", c.dir)
	cmd.Env = env()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to simjecture mcp: %v", err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, " "); got != "brief cancel commit note notes review review_status run status" {
		t.Errorf("tools %q, want the lab calls of a minimal study", got)
	}
	note := callTool(t, ctx, cs, "note", `{"statement":"hello over MCP"}`)
	if note.IsError || !strings.Contains(toolText(note), `"ok":true`) {
		t.Errorf("note: %s", toolText(note))
	}
	bad := callTool(t, ctx, cs, "run", `{"source":"missing.py","outputs":["o"]}`)
	if !bad.IsError || !strings.Contains(toolText(bad), `"ok":false`) {
		t.Errorf("a refused run must be a tool error with ok:false: %s", toolText(bad))
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("simjecture mcp did not exit 0 once stdin closed: %v", cmd.ProcessState)
	}
}

func callTool(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// codexStudy runs a codex study against mock until it stops.
func codexStudy(t *testing.T, mock *mockresponses.Server) (campaign, result) {
	t.Helper()
	c := newCampaign(t, "codex")
	reapMarker(t, c.dir)
	_, homeEnv := codexHome(t, mock.URL)
	return c, runWith(t, homeEnv, 4*time.Minute, "study", "--campaign", c.dir,
		"--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "codex", "--executable", codex(t), "--model", "mock-model",
		"--execution-backend", "bubblewrap", "--wall-seconds", "300", "--turn-seconds", "120", "--batch")
}

// providerState reads the provider block of the snapshot.
func providerState(t *testing.T, dir string) (retries int, category string) {
	t.Helper()
	var snap struct {
		Provider struct {
			RetryCount    int     `json:"retry_count"`
			ErrorCategory *string `json:"error_category"`
		} `json:"provider"`
	}
	if err := json.Unmarshal([]byte(sj(t, "", "status", "--campaign", dir, "--json").stdout), &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Provider.ErrorCategory != nil {
		category = *snap.Provider.ErrorCategory
	}
	return snap.Provider.RetryCount, category
}

// TestCodexOutageResumesTheFailedThread: the Responses API is down for the
// first requests, so Codex's first turn fails after its own retries; the
// supervisor retries after a backoff, resuming the thread the failed turn
// started, and the study still completes.
func TestCodexOutageResumesTheFailedThread(t *testing.T) {
	t.Parallel()
	codex(t)
	mock := mockresponses.New(func(r mockresponses.Request) mockresponses.Reply {
		if last := r.Last(); last.Type == "message" && strings.Contains(last.Text, "# How to work") {
			// Every attempt at the first prompt fails, so turn 1 fails.
			return mockresponses.Reply{Status: 503, Error: "the mock is overloaded"}
		}
		return mockresponses.Research(r)
	})
	defer mock.Close()
	c, r := codexStudy(t, mock)
	checkCompletedAfterRetry(t, c.dir, r)
	first, _ := os.ReadFile(filepath.Join(c.dir, "supervisor", "turn-00001", "stdout.log"))
	if !strings.Contains(string(first), `"type":"turn.failed"`) {
		t.Errorf("turn 1 did not fail as scripted:\n%s", first)
	}
	checkSameThread(t, c.dir)
}

// TestCodexAuthFailurePauses: a provider that refuses the key stops the
// study for the operator, classified from Codex's error events.
func TestCodexAuthFailurePauses(t *testing.T) {
	t.Parallel()
	codex(t)
	mock := mockresponses.New(func(mockresponses.Request) mockresponses.Reply {
		return mockresponses.Reply{Status: 401, Error: "Incorrect API key provided"}
	})
	defer mock.Close()
	c, r := codexStudy(t, mock)
	checkNeedsOperator(t, c.dir, r, "authentication")
}
