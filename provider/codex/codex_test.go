package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
)

// run is one recorded invocation of testdata/fake-codex.
type run struct {
	Argv  []string          `json:"argv"`
	Cwd   string            `json:"cwd"`
	Env   map[string]string `json:"env"`
	Stdin *string           `json:"stdin"`
}

// fake sets up a turn that runs testdata/fake-codex with a canned JSONL
// stdout, and reads back what it recorded.
type fake struct {
	t      *testing.T
	agent  *Agent
	record string
	dir    string
}

func newFake(t *testing.T) *fake {
	t.Helper()
	exe, err := filepath.Abs(filepath.Join("testdata", "fake-codex"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	return &fake{t: t, agent: &Agent{Executable: exe, Grace: 200 * time.Millisecond},
		record: filepath.Join(tmp, "record.jsonl"), dir: tmp}
}

// turn is a worker turn of a study in the fake's folder; jsonl is what the
// fake prints, env adds FAKE_CODEX_* settings.
func (f *fake) turn(role, jsonl string, env map[string]string) provider.Turn {
	f.t.Helper()
	work := filepath.Join(f.dir, "research")
	if err := os.MkdirAll(work, 0o755); err != nil {
		f.t.Fatal(err)
	}
	script := filepath.Join(f.dir, "script.jsonl")
	if err := os.WriteFile(script, []byte(jsonl), 0o644); err != nil {
		f.t.Fatal(err)
	}
	e := map[string]string{"FAKE_CODEX_RECORD": f.record, "FAKE_CODEX_SCRIPT": script,
		"SIMJECTURE_BIN": "/opt/sj/simjecture", "SIMJECTURE_STUDY": f.dir}
	for k, v := range env {
		e[k] = v
	}
	return provider.Turn{Role: role, Number: 1, Prompt: "Do the research.", Dir: work,
		LogDir: filepath.Join(f.dir, "turn"), Env: e, Timeout: 30 * time.Second, Model: "gpt-test",
		Study: f.dir, MCPCommand: []string{"/opt/sj/simjecture", "mcp", "--campaign", f.dir}}
}

func (f *fake) runs() []run {
	f.t.Helper()
	file, err := os.Open(f.record)
	if err != nil {
		f.t.Fatalf("the fake codex recorded nothing: %v", err)
	}
	defer file.Close()
	var out []run
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r run
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func (f *fake) runTurn(t provider.Turn) provider.Outcome {
	f.t.Helper()
	out, err := f.agent.RunTurn(context.Background(), t)
	if err != nil {
		f.t.Fatalf("RunTurn: %v", err)
	}
	return out
}

const okTurn = `{"type":"thread.started","thread_id":"T1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"queued an experiment"}}
{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":100,"output_tokens":80}}
`

func TestArgs(t *testing.T) {
	t.Parallel()
	mcp := []string{"-c", `mcp_servers.simjecture.command="/opt/sj/simjecture"`,
		"-c", `mcp_servers.simjecture.args=["mcp", "--campaign", "STUDY"]`}
	tests := []struct {
		name   string
		role   string
		cursor string
		model  string
		want   []string // before the prompt; STUDY is the study folder
	}{
		{"worker, new thread", provider.RoleWorker, "", "gpt-test",
			append([]string{"exec", "--model", "gpt-test", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}, mcp...)},
		{"worker resumes its thread", provider.RoleWorker, "T1", "gpt-test",
			append([]string{"exec", "resume", "T1", "--model", "gpt-test", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}, mcp...)},
		{"worker, Codex's default model", provider.RoleWorker, "", "",
			append([]string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}, mcp...)},
		{"reviewer never resumes and gets no tools", provider.RoleReviewer, "T1", "judge-test",
			[]string{"exec", "--model", "judge-test", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "--ephemeral"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			turn := f.turn(tc.role, okTurn, nil)
			turn.Cursor, turn.Model = tc.cursor, tc.model
			if tc.role == provider.RoleReviewer {
				turn.MCPCommand, turn.Prompt = nil, `{"claim_id":"root"}`
			}
			f.runTurn(turn)
			r := f.runs()[0]
			want := make([]string, len(tc.want))
			for i, a := range tc.want {
				want[i] = strings.ReplaceAll(a, "STUDY", f.dir)
			}
			want = append(want, PromptFor(turn))
			if strings.Join(r.Argv, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("argv:\n got %q\nwant %q", r.Argv, want)
			}
			if r.Cwd != turn.Dir {
				t.Errorf("ran in %s, want %s", r.Cwd, turn.Dir)
			}
			if r.Stdin != nil {
				t.Errorf("a prompt given as an argument must not also come on stdin")
			}
		})
	}
}

func TestPromptFor(t *testing.T) {
	t.Parallel()
	worker := provider.Turn{Role: provider.RoleWorker, Prompt: "GUIDE", MCPCommand: []string{"sj", "mcp"}}
	if p := PromptFor(worker); !strings.HasPrefix(p, "GUIDE") || !strings.Contains(p, `"simjecture"`) {
		t.Errorf("a new worker thread should hear of the MCP tools: %q", p)
	}
	worker.Cursor = "T1"
	if p := PromptFor(worker); p != "GUIDE" {
		t.Errorf("a resumed thread gets the supervisor's prompt as it is, got %q", p)
	}
	reviewer := provider.Turn{Role: provider.RoleReviewer, Prompt: `{"claim_id":"root"}`}
	if p := PromptFor(reviewer); !strings.Contains(p, "independent reviewer") || !strings.HasSuffix(p, "{\"claim_id\":\"root\"}\n") {
		t.Errorf("the reviewer prompt should hold the instructions, then the packet: %q", p)
	}
}

func TestLongPromptGoesOnStdin(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	turn := f.turn(provider.RoleWorker, okTurn, nil)
	turn.Cursor = "T1"
	turn.Prompt = strings.Repeat("x", MaxArgPrompt) + "…the end"
	f.runTurn(turn)
	r := f.runs()[0]
	if last := r.Argv[len(r.Argv)-1]; last != "-" {
		t.Fatalf("a %d-byte prompt: last argument %.40q, want -", len(turn.Prompt), last)
	}
	if r.Stdin == nil || *r.Stdin != turn.Prompt {
		t.Errorf("stdin is not the prompt (got %d bytes, want %d)", len(deref(r.Stdin)), len(turn.Prompt))
	}
	if r.Argv[1] != "resume" || r.Argv[2] != "T1" {
		t.Errorf("a long prompt must still resume the thread: %q", r.Argv[:3])
	}
	logged, err := os.ReadFile(filepath.Join(turn.LogDir, "prompt.txt"))
	if err != nil || string(logged) != turn.Prompt {
		t.Errorf("prompt.txt does not hold the prompt (%v)", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestEnvironmentIsPassed(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	turn := f.turn(provider.RoleWorker, okTurn, nil)
	f.runTurn(turn)
	env := f.runs()[0].Env
	for k, want := range map[string]string{"SIMJECTURE_BIN": "/opt/sj/simjecture", "SIMJECTURE_STUDY": f.dir, "SIMJECTURE_ROLE": "worker"} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q (the shell fallback needs it)", k, env[k], want)
		}
	}
}
