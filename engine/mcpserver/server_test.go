package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/sandbox"
)

// available reports every backend as available, so the test needs no probe.
func available(_ context.Context, b sandbox.Backend) sandbox.Report {
	if b == sandbox.Auto {
		b = sandbox.Bubblewrap
	}
	return sandbox.Report{Backend: b, Available: true, Selected: b, Reason: "test"}
}

// newLab creates a study in a temporary folder and returns its lab.
func newLab(t *testing.T) *engine.Lab {
	t.Helper()
	dir := t.TempDir()
	hyp, ins, agent := filepath.Join(dir, "h.txt"), filepath.Join(dir, "i.txt"), filepath.Join(dir, "agent.sh")
	for p, body := range map[string]string{hyp: "sum of k^3 is a square", ins: "check it", agent: "#!/bin/sh\nexit 0\n"} {
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := engine.Campaign{Dir: filepath.Join(dir, "campaign")}
	req := engine.Request{HypothesisFile: hyp, InstructionsFile: ins, Mode: "minimal", AgentBackend: "command",
		Executable: agent, ExecutionBackend: "bubblewrap", CompletionPolicy: "repair", WallSeconds: 600, TurnSeconds: 60}
	if _, err := engine.CreateStudy(context.Background(), c, req, available); err != nil {
		t.Fatal(err)
	}
	s, err := c.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &engine.Lab{C: c, S: s, Cores: 2, MemMB: 4096}
}

// connect serves lab over an in-memory transport and returns a client
// session; the server goroutine is waited for at cleanup.
func connect(t *testing.T, lab *engine.Lab) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, lab, "test", serverT) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return cs
}

func TestToolsAreTheLabSchema(t *testing.T) {
	t.Parallel()
	cs := connect(t, newLab(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	want := engine.CallsFor(engine.RoleWorker) // the test's study is a minimal one
	if len(got) != len(want) {
		t.Errorf("%d tools, want one per lab call of the mode (%d)", len(got), len(want))
	}
	for _, spec := range want {
		tool, ok := got[spec.Name]
		if !ok {
			t.Errorf("no tool %s", spec.Name)
			continue
		}
		if a, b := canonical(t, tool.InputSchema), canonical(t, spec.JSONSchema()); a != b {
			t.Errorf("tool %s schema:\n%s\nwant CallSpec.JSONSchema():\n%s", spec.Name, a, b)
		}
		if tool.Description != spec.Description {
			t.Errorf("tool %s description %q, want %q", spec.Name, tool.Description, spec.Description)
		}
	}
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(m) // maps marshal with sorted keys
	return string(b)
}

// labReply is the CLI's JSON shape of a lab call's outcome.
type labReply struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

func call(t *testing.T, cs *mcp.ClientSession, name, args string) (labReply, bool) {
	t.Helper()
	params := &mcp.CallToolParams{Name: name}
	if args != "" {
		params.Arguments = json.RawMessage(args)
	}
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("%s: protocol error %v (a refused call must be a tool result)", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items, want 1", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T, want text", name, res.Content[0])
	}
	var r labReply
	if err := json.Unmarshal([]byte(text.Text), &r); err != nil {
		t.Fatalf("%s: result is not the lab JSON: %v\n%s", name, err, text.Text)
	}
	return r, res.IsError
}

func TestCalls(t *testing.T) {
	t.Parallel()
	lab := newLab(t)
	if err := os.WriteFile(filepath.Join(lab.C.Research(), "sim.py"), []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, lab)
	tests := []struct {
		name, call, args string
		ok               bool
		want             string // in the result, or in the error
	}{
		{"note", "note", `{"statement":"hello from MCP"}`, true, `"statement":"hello from MCP"`},
		{"missing argument", "run", `{"source":"sim.py"}`, false, "missing required argument outputs"},
		{"unknown argument", "note", `{"statement":"x","mood":"good"}`, false, "unknown argument mood"},
		{"unknown experiment", "status", `{"experiment":"exp_nope"}`, false, "no experiment exp_nope"},
		{"snapshot", "status", `{}`, true, `"claims":[{"id":"root"`},
		{"no arguments at all", "status", ``, true, `"agent_backend":"command"`},
	}
	for _, tc := range tests {
		r, isErr := call(t, cs, tc.call, tc.args)
		if r.OK != tc.ok || isErr == tc.ok {
			t.Errorf("%s: ok %v, isError %v; want ok %v", tc.name, r.OK, isErr, tc.ok)
		}
		if got := string(r.Result) + r.Error; !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s does not contain %s", tc.name, got, tc.want)
		}
	}
}

// TestRunWakesTheSupervisor listens where the supervisor listens (the
// campaign's abstract unix socket) and wants one datagram after run.
func TestRunWakesTheSupervisor(t *testing.T) {
	t.Parallel()
	lab := newLab(t)
	if err := os.WriteFile(filepath.Join(lab.C.Research(), "sim.py"), []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(lab.C.Dir))
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "@simjecture-" + hex.EncodeToString(sum[:12]), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cs := connect(t, lab)
	r, _ := call(t, cs, "run", `{"source":"sim.py","outputs":["out.txt"],"stage":"exploration"}`)
	var receipt struct{ ID, Status string }
	if err := json.Unmarshal(r.Result, &receipt); err != nil || !strings.HasPrefix(receipt.ID, "exp_") || receipt.Status != "queued" {
		t.Fatalf("run returned %s (%v), want a queued receipt", r.Result, err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := conn.ReadFromUnix(make([]byte, 16)); err != nil {
		t.Errorf("no wake-up after run: %v", err)
	}
	again, _ := call(t, cs, "status", `{"experiment":"`+receipt.ID+`"}`)
	if !strings.Contains(string(again.Result), receipt.ID) {
		t.Errorf("status of %s: %s", receipt.ID, again.Result)
	}
}
