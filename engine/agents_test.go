package engine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/simjecture/simjecture/provider"
)

// minimalRequests gives, for each row of the agent backend table, the
// smallest request its check accepts. A new row without one fails
// TestEveryAgentBackendIsWired.
func minimalRequests(t *testing.T) map[string]Request {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "agent")
	conn := filepath.Join(dir, "connection.json")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conn, []byte(`{"base_url":"http://127.0.0.1:9/v1","api_key":"k"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]Request{
		"codex":    {AgentBackend: "codex", Executable: exe},
		"claude":   {AgentBackend: "claude", Executable: exe},
		"api":      {AgentBackend: "api", Model: "m", ProviderConfig: conn},
		"command":  {AgentBackend: "command", Executable: exe},
		"scripted": {AgentBackend: "scripted"},
	}
}

// TestEveryAgentBackendIsWired: each row has a check and a constructor,
// accepts a minimal request, and builds an agent of its own kind from the
// contract that request freezes; each takes only known fields.
func TestEveryAgentBackendIsWired(t *testing.T) {
	reqs := minimalRequests(t)
	if len(AgentBackends()) == 0 {
		t.Fatal("the agent backend table is empty")
	}
	for _, b := range AgentBackends() {
		t.Run(b.Name, func(t *testing.T) {
			if b.Check == nil || b.New == nil || b.Judge == nil || !b.ToolFree || b.ToolFreeHow == "" {
				t.Fatalf("row %s: check %v, constructor %v, tool-free judge %v %v %q", b.Name, b.Check != nil, b.New != nil, b.Judge != nil, b.ToolFree, b.ToolFreeHow)
			}
			judge := b.Judge(provider.Turn{Role: provider.RoleReviewer, Env: map[string]string{"SIMJECTURE_STUDY": "/s", "SIMJECTURE_BIN": "/b"},
				Tools: []provider.Tool{{Name: "run"}}, MCPCommand: []string{"x"}, Study: "/s"})
			if judge.Role != provider.RoleJudge || !judge.ToolFree || judge.Tools != nil || judge.MCPCommand != nil || judge.Study != "" ||
				judge.Env["SIMJECTURE_STUDY"] != "" || judge.Env["SIMJECTURE_ROLE"] != provider.RoleJudge {
				t.Errorf("row %s: its judge turn keeps a tool: %+v", b.Name, judge)
			}
			for f := range b.Needs {
				if (&Request{}).Field(f) == nil {
					t.Errorf("row %s names field %q, which a request does not have", b.Name, f)
				}
			}
			r, ok := reqs[b.Name]
			if !ok {
				t.Fatalf("no minimal request for %s in minimalRequests", b.Name)
			}
			if err := checkAgent(&r); err != nil {
				t.Fatalf("the minimal request is refused: %v", err)
			}
			k := Contract{AgentBackend: r.AgentBackend, Model: r.Model, Executable: r.Executable, ProviderConfig: r.ProviderConfig}
			agent, err := NewAgent(k, "/proc/self/exe")
			if err != nil {
				t.Fatalf("NewAgent: %v", err)
			}
			if agent.Name() != b.Name {
				t.Errorf("the %s row builds a %s agent", b.Name, agent.Name())
			}
			if b.Settings != nil {
				for _, p := range b.Settings(k) {
					if !filepath.IsAbs(p) {
						t.Errorf("row %s: setting %q is not an absolute path", b.Name, p)
					}
				}
			}
		})
	}
}

// TestAgentFieldErrors: the table's needs and the rows' checks refuse bad
// requests with a FieldError naming the field, which wraps ErrInvalid.
func TestAgentFieldErrors(t *testing.T) {
	reqs := minimalRequests(t)
	edit := func(name string, fn func(*Request)) Request {
		r := reqs[name]
		fn(&r)
		return r
	}
	tests := []struct {
		name    string
		req     Request
		field   Field
		problem Problem
	}{
		{"api without connection file", edit("api", func(r *Request) { r.ProviderConfig = "" }), FieldProviderConfig, Missing},
		{"api without model", edit("api", func(r *Request) { r.Model = "" }), FieldModel, Missing},
		{"api with executable", edit("api", func(r *Request) { r.Executable = "/bin/true" }), FieldExecutable, Refused},
		{"api with a readable connection file", edit("api", func(r *Request) {
			if err := os.Chmod(r.ProviderConfig, 0o644); err != nil {
				t.Fatal(err)
			}
		}), FieldProviderConfig, Invalid},
		{"command without executable", edit("command", func(r *Request) { r.Executable = "" }), FieldExecutable, Missing},
		{"command with a non-executable", edit("command", func(r *Request) { r.Executable = r.ProviderConfig + "x" }), FieldExecutable, Invalid},
		{"scripted with executable", edit("scripted", func(r *Request) { r.Executable = "/bin/true" }), FieldExecutable, Refused},
		{"scripted with a hypothesis it cannot test", edit("scripted", func(r *Request) {
			r.HypothesisFile = filepath.Join(t.TempDir(), "h.txt")
			if err := os.WriteFile(r.HypothesisFile, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}), FieldHypothesisFile, Invalid},
		{"codex with connection file", edit("codex", func(r *Request) { r.ProviderConfig = "/etc/hosts" }), FieldProviderConfig, Refused},
		{"claude with a settings file that is not JSON", edit("claude", func(r *Request) { r.ProviderConfig = r.Executable }),
			FieldProviderConfig, Invalid},
		{"claude not installed", edit("claude", func(r *Request) { r.Executable = "no-such-claude-binary" }), FieldExecutable, Invalid},
		{"codex not installed", edit("codex", func(r *Request) { r.Executable = "no-such-codex-binary" }), FieldExecutable, Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.req
			err := checkAgent(&r)
			fe, ok := AsFieldError(err)
			if !ok || fe.Field != tt.field || fe.Problem != tt.problem || fe.Backend != r.AgentBackend {
				t.Fatalf("want a %v FieldError on %q, got %v", tt.problem, tt.field, err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
		})
	}
}

// TestNewAgentRefusesUnknownBackend: a contract naming a backend the table
// lacks is refused, never built as some other kind.
func TestNewAgentRefusesUnknownBackend(t *testing.T) {
	if _, err := NewAgent(Contract{AgentBackend: "no-such-backend", Executable: "/bin/true"}, "/proc/self/exe"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("want ErrInvalid, got %v", err)
	}
}
