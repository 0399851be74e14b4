package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/provider"
)

// read feeds a stream recorded from the real CLI (testdata/*.jsonl, from
// Claude Code 2.1.332 against the e2e mock) through a stream, in odd-sized
// chunks, with replace applied first.
func read(t *testing.T, name string, replace ...string) *stream {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.NewReplacer(replace...).Replace(string(b)))
	s := newStream()
	for len(b) > 0 {
		n := min(len(b), 97)
		_, _ = s.Write(b[:n])
		b = b[n:]
	}
	return s
}

// TestStreamClassification: failures come from the stream's API error
// events and stderr only; the model's own text never decides.
func TestStreamClassification(t *testing.T) {
	tests := []struct {
		name, file string
		exit       int
		replace    []string
		want       string // "" for success
	}{
		{"success", "ok", 0, nil, ""},
		{"model text about errors is not a failure", "ok", 0,
			[]string{"hello from the mock", "HTTP 401 invalid api key, quota exceeded, 403 permission denied"}, ""},
		{"401", "401", 1, nil, provider.CategoryAuthentication},
		{"402 credit", "402", 1, nil, provider.CategoryQuota},
		{"404 unknown model", "404", 1, nil, provider.CategoryPermission},
		{"529 overloaded, whatever its message says", "529", 1, []string{"mock says no", "invalid api key"}, provider.CategoryTransient},
		{"dropped stream", "drop", 1, nil, provider.CategoryTransient},
		{"429 usage limit", "529", 1, []string{`"api_error_status":529`, `"api_error_status":429`, "mock says no", "usage limit reached"},
			provider.CategoryQuota},
		{"429 rate limit", "529", 1, []string{`"api_error_status":529`, `"api_error_status":429`}, provider.CategoryTransient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := read(t, tc.file, tc.replace...)
			f := s.failure(provider.Outcome{ExitCode: tc.exit})
			switch {
			case tc.want == "" && f != nil:
				t.Errorf("failure %+v, want none", f)
			case tc.want != "" && (f == nil || f.Category != tc.want):
				t.Errorf("failure %+v, want %s", f, tc.want)
			}
		})
	}
}

// TestStreamOutcome: the session, usage and answer of a run.
func TestStreamOutcome(t *testing.T) {
	s := read(t, "ok")
	var out provider.Outcome
	s.fill(&out, provider.Turn{Role: provider.RoleWorker})
	if out.Cursor == "" || !s.started() || out.LastLine != "hello from the mock" {
		t.Errorf("cursor %q, started %v, answer %q", out.Cursor, s.started(), out.LastLine)
	}
	if out.InputTokens == nil || *out.InputTokens != 11 || out.OutputTokens == nil || *out.OutputTokens != 7 || out.Thread != "" {
		t.Errorf("usage %v/%v thread %q; want 11/7 from the result event, per turn", out.InputTokens, out.OutputTokens, out.Thread)
	}
	var rv provider.Outcome
	s.fill(&rv, provider.Turn{Role: provider.RoleReviewer})
	if rv.Cursor != "" {
		t.Errorf("a reviewer session is never resumed, got cursor %q", rv.Cursor)
	}
}

// TestToolFreeTurnVoidedByAToolCall: a tool_use block in a tool-free
// turn's stream leaves it without an answer.
func TestToolFreeTurnVoidedByAToolCall(t *testing.T) {
	s := read(t, "drop") // its first message holds text only; add a tool call
	call := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]}}` + "\n"
	_, _ = s.Write([]byte(call))
	var out provider.Outcome
	s.fill(&out, provider.Turn{Role: "judge", ToolFree: true})
	if out.ToolCalls != 1 || out.LastLine != "" {
		t.Errorf("tool calls %d, answer %q; want 1 and no answer", out.ToolCalls, out.LastLine)
	}
}

// TestArgs: workers resume and get only the lab tools pre-approved through
// the MCP file; reviewers read only; tool-free turns get no tools.
func TestArgs(t *testing.T) {
	dir := t.TempDir()
	a := &Agent{Executable: "claude", Settings: "/ops/settings.json"}
	worker := provider.Turn{Role: provider.RoleWorker, LogDir: dir, Cursor: "sess-1", Model: "m",
		MCPCommand: []string{"/bin/sj", "mcp", "--campaign", "/c"}, Tools: []provider.Tool{{Name: "run"}, {Name: "status"}}}
	tests := []struct {
		name     string
		turn     provider.Turn
		want     []string
		mustNot  []string
		toolList string
	}{
		{"worker", worker, []string{"-p", "--resume sess-1", "--model m", "--settings /ops/settings.json",
			"--strict-mcp-config", "--permission-mode acceptEdits", "--setting-sources user"},
			[]string{"--dangerously-skip-permissions", "--tools"}, "mcp__simjecture__run,mcp__simjecture__status"},
		{"reviewer", provider.Turn{Role: provider.RoleReviewer, LogDir: dir, Cursor: "sess-1"},
			[]string{"--tools Read,Glob,Grep", "--no-session-persistence", "--strict-mcp-config"},
			[]string{"--resume", "--mcp-config", "--dangerously-skip-permissions"}, "Read,Glob,Grep"},
		{"tool-free", provider.Turn{Role: "judge", LogDir: dir, ToolFree: true},
			[]string{"--tools ", "--no-session-persistence", "--strict-mcp-config"},
			[]string{"--resume", "--mcp-config", "--allowedTools"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args, err := a.args(tc.turn)
			if err != nil {
				t.Fatal(err)
			}
			line := strings.Join(args, " ") + " "
			for _, w := range tc.want {
				if !strings.Contains(line, w+" ") {
					t.Errorf("args %q lack %q", line, w)
				}
			}
			for _, w := range tc.mustNot {
				if strings.Contains(line, w+" ") {
					t.Errorf("args %q hold %q", line, w)
				}
			}
			if i := slices.Index(args, "--allowedTools"); (i >= 0) != (tc.toolList != "") || i >= 0 && args[i+1] != tc.toolList {
				t.Errorf("--allowedTools in %q, want %q", line, tc.toolList)
			}
			if tc.turn.ToolFree && args[slices.Index(args, "--tools")+1] != "" {
				t.Errorf("a tool-free turn must pass --tools \"\": %q", line)
			}
		})
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "mcp.json"))
	if err != nil || json.Unmarshal(b, &cfg) != nil || cfg.MCPServers[ServerName].Command != "/bin/sj" ||
		strings.Join(cfg.MCPServers[ServerName].Args, " ") != "mcp --campaign /c" {
		t.Errorf("mcp.json %s (%v): want the lab MCP server", b, err)
	}
}

// TestEnvIsTheStudysOwn: HOME and the configuration folder are the state
// folder's, never the operator's.
func TestEnvIsTheStudysOwn(t *testing.T) {
	env := Env("/c/supervisor/agent-state")
	if env["HOME"] != "/c/supervisor/agent-state/home" || env["CLAUDE_CONFIG_DIR"] != "/c/supervisor/agent-state/config" ||
		env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] != "1" {
		t.Errorf("env %v", env)
	}
	if got := stateDir(provider.Turn{Role: provider.RoleReviewer, LogDir: "/l", StateDir: "/s"}); got != "/l/claude-state" {
		t.Errorf("a reviewer's state folder is %q, want one in its own log folder", got)
	}
}
