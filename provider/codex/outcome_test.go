package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
)

func TestOutcome(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	out := f.runTurn(f.turn(provider.RoleWorker, okTurn, nil))
	if out.Failure != nil || out.ExitCode != 0 {
		t.Fatalf("a completed turn failed: %+v", out)
	}
	if out.Cursor != "T1" || out.Thread != "T1" {
		t.Errorf("cursor %q, thread %q; want T1 from thread.started", out.Cursor, out.Thread)
	}
	if out.InputTokens == nil || *out.InputTokens != 1200 || out.OutputTokens == nil || *out.OutputTokens != 80 {
		t.Errorf("usage %v/%v, want 1200/80 from turn.completed", ptr(out.InputTokens), ptr(out.OutputTokens))
	}
	if out.LastLine != "queued an experiment" {
		t.Errorf("LastLine %q, want the last agent message", out.LastLine)
	}
}

func ptr(p *int64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatInt(*p, 10)
}

func TestFailedTurnKeepsItsCursor(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	jsonl := `{"type":"thread.started","thread_id":"T7"}
{"type":"turn.started"}
{"type":"error","message":"stream disconnected before completion: stream closed before response.completed"}
{"type":"turn.failed","error":{"message":"stream disconnected before completion: stream closed before response.completed"}}
`
	out := f.runTurn(f.turn(provider.RoleWorker, jsonl, map[string]string{"FAKE_CODEX_EXIT": "1"}))
	if out.Failure == nil || out.Failure.Category != provider.CategoryTransient {
		t.Fatalf("failure %+v, want transient", out.Failure)
	}
	if out.Cursor != "T7" {
		t.Errorf("a failed turn's cursor is %q, want T7: the next turn resumes the same thread", out.Cursor)
	}
}

func TestReviewerVerdictIsTheLastAgentMessage(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	verdict := `{"claim_id": "root", "decision": "approved", "disposition": "supported",
 "rationale": "the identity holds for every n checked", "evidence_gaps": [], "next_test": null}`
	msg, _ := json.Marshal(verdict)
	jsonl := fmt.Sprintf(`{"type":"thread.started","thread_id":"R1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Reading the artifacts."}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"cat result.json","aggregated_output":"{}","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":%s}}
{"type":"turn.completed","usage":{"input_tokens":50,"output_tokens":20}}
`, msg)
	turn := f.turn(provider.RoleReviewer, jsonl, nil)
	turn.MCPCommand = nil
	out := f.runTurn(turn)
	if out.LastLine != verdict {
		t.Errorf("LastLine:\n%s\nwant the last agent message:\n%s", out.LastLine, verdict)
	}
	if out.Cursor != "" || out.Thread != "R1" {
		t.Errorf("reviewer cursor %q (want none), thread %q (want R1, for usage)", out.Cursor, out.Thread)
	}
}

func TestClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		jsonl  string
		stderr string
		exit   string
		want   string // category, or "" for success
	}{
		{"turn.failed stream disconnected with exit 0 is transient",
			`{"type":"thread.started","thread_id":"T"}` + "\n" + `{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}` + "\n",
			"", "0", provider.CategoryTransient},
		{"an agent message quoting 401 is not a failure",
			`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"HTTP 401 unauthorized and quota exhausted are examples"}}` + "\n" +
				`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}` + "\n",
			"", "0", ""},
		{"a retry Codex recovered from is not a failure",
			`{"type":"error","message":"Reconnecting... 1/5 (unexpected status 401 Unauthorized: bad key)"}` + "\n" +
				`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}` + "\n",
			"", "0", ""},
		{"a non-fatal error item is not a failure",
			`{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for x not found (403)"}}` + "\n" +
				`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}` + "\n",
			"", "0", ""},
		{"a final 401 pauses for authentication",
			`{"type":"error","message":"Reconnecting... 1/1 (unexpected status 500)"}` + "\n" +
				`{"type":"error","message":"exceeded retry limit, last status: 401 Unauthorized"}` + "\n" +
				`{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 401 Unauthorized"}}` + "\n",
			"", "1", provider.CategoryAuthentication},
		{"exhausted quota pauses",
			`{"type":"turn.failed","error":{"message":"Quota exceeded. Check your plan and billing details."}}` + "\n",
			"", "1", provider.CategoryQuota},
		{"a rate limit is transient",
			`{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}` + "\n",
			"", "1", provider.CategoryTransient},
		{"stderr names an unknown model",
			"", "Error: unexpected status 404 Not Found: model not found\n", "1", provider.CategoryPermission},
		{"a top-level error with exit 0 still fails the turn",
			`{"type":"error","message":"unexpected status 503 Service Unavailable: overloaded"}` + "\n",
			"", "0", provider.CategoryTransient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			out := f.runTurn(f.turn(provider.RoleWorker, tc.jsonl, map[string]string{"FAKE_CODEX_STDERR": tc.stderr, "FAKE_CODEX_EXIT": tc.exit}))
			got := ""
			if out.Failure != nil {
				got = out.Failure.Category
			}
			if got != tc.want {
				t.Errorf("category %q (%+v), want %q", got, out.Failure, tc.want)
			}
		})
	}
}

func TestAllowanceIsACheckpoint(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	turn := f.turn(provider.RoleWorker, `{"type":"thread.started","thread_id":"T3"}`+"\n", map[string]string{"FAKE_CODEX_SLEEP": "30"})
	turn.Timeout = 1500 * time.Millisecond // room for the fake to print its first line on a loaded host
	start := time.Now()
	out := f.runTurn(turn)
	if !out.TimedOut || out.Failure != nil {
		t.Errorf("a turn cut at its allowance: TimedOut %v, Failure %+v; want true, none", out.TimedOut, out.Failure)
	}
	if out.Cursor != "T3" {
		t.Errorf("cursor %q, want T3", out.Cursor)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("stopping the turn took %v", took)
	}
	checkGroupGone(t, f.record+".pids")
}

func TestCancelStopsTheTurn(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	turn := f.turn(provider.RoleWorker, `{"type":"thread.started","thread_id":"T4"}`+"\n", map[string]string{"FAKE_CODEX_SLEEP": "30"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan provider.Outcome, 1)
	go func() {
		out, _ := f.agent.RunTurn(ctx, turn)
		done <- out
	}()
	waitFor(t, func() bool { _, err := os.Stat(f.record + ".pids"); return err == nil })
	cancel()
	select {
	case out := <-done:
		if out.Failure != nil {
			t.Errorf("a cancelled turn is not a provider failure: %+v", out.Failure)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not stop the turn")
	}
	checkGroupGone(t, f.record+".pids")
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkGroupGone wants the fake and its child dead (reaped or gone).
func checkGroupGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake wrote no pids: %v", err)
	}
	for _, field := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(field)
		waitFor(t, func() bool { return !alive(pid) })
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func TestLostThreadStartsANewOne(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	turn := f.turn(provider.RoleWorker, strings.ReplaceAll(okTurn, "T1", "T9"), map[string]string{"FAKE_CODEX_LOST": "1"})
	turn.Cursor = "T-gone"
	out := f.runTurn(turn)
	runs := f.runs()
	if len(runs) != 2 || runs[0].Argv[1] != "resume" || runs[1].Argv[1] == "resume" {
		t.Fatalf("want a failed resume, then a run without resume; got %d runs", len(runs))
	}
	if !strings.Contains(runs[1].Argv[len(runs[1].Argv)-1], "could not be resumed") {
		t.Errorf("the new thread's prompt should say the session was lost")
	}
	if out.Failure != nil || out.Cursor != "T9" {
		t.Errorf("outcome: failure %+v, cursor %q; want none, T9", out.Failure, out.Cursor)
	}
}

// TestJudgeToolCallsAreCounted: a judge's stream with any tool item is
// reported (the engine voids its verdict); messages, reasoning and error
// items are not tools; a started and completed item counts once.
func TestJudgeToolCallsAreCounted(t *testing.T) {
	t.Parallel()
	verdict := `{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"{}"}}`
	cases := []struct {
		name  string
		items string
		want  int
	}{
		{"tool-free", `{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"thinking"}}
{"type":"item.completed","item":{"id":"item_1","type":"error","message":"a warning"}}`, 0},
		{"a command", `{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","exit_code":0}}`, 1},
		{"an MCP call and a web search", `{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call"}}
{"type":"item.started","item":{"id":"item_3","type":"web_search"}}`, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			jsonl := "{\"type\":\"thread.started\",\"thread_id\":\"J1\"}\n{\"type\":\"turn.started\"}\n" + tc.items + "\n" + verdict +
				"\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}\n"
			turn := f.turn(provider.RoleJudge, jsonl, nil)
			turn.MCPCommand = nil
			out := f.runTurn(turn)
			if out.ToolCalls != tc.want || out.Cursor != "" {
				t.Errorf("tool events %d (want %d), cursor %q (want none)", out.ToolCalls, tc.want, out.Cursor)
			}
			if r := f.runs()[0]; !strings.Contains(strings.Join(r.Argv, " "), "--sandbox read-only --ephemeral") ||
				strings.Contains(strings.Join(r.Argv, " "), "mcp_servers") {
				t.Errorf("judge argv %q: want read-only, ephemeral, no MCP server", r.Argv)
			}
		})
	}
}
