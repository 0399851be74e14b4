package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMCPAnswersBeforeStdinCloses writes initialize, the initialized
// notification and a request to `simjecture mcp` and closes its stdin in
// one go: every request read before the end gets its reply before the
// server exits (exit 0). The note call's reply says it was recorded.
func TestMCPAnswersBeforeStdinCloses(t *testing.T) {
	t.Parallel()
	c := pausedStudy(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	inited := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	tests := []struct {
		name, last string
		want       string // in the last reply
	}{
		{"tools/list", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `"name":"review_status"`},
		{"tools/call note", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"note","arguments":{"statement":"just before EOF"}}}`,
			`just before EOF`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sj(t, init+"\n"+inited+"\n"+tt.last+"\n", "mcp", "--campaign", c.dir)
			replies := mcpReplies(t, r.stdout)
			if r.code != 0 || len(replies) != 2 || string(replies[0].ID) != "1" || string(replies[1].ID) != "2" {
				t.Fatalf("want the replies to requests 1 and 2, then exit 0; got %d replies: %s", len(replies), r)
			}
			if replies[1].Error != nil || !strings.Contains(string(replies[1].Result), tt.want) {
				t.Errorf("reply to %s lacks %q: %s", tt.name, tt.want, r.stdout)
			}
		})
	}
}

type mcpReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// mcpReplies decodes the JSON-RPC replies the server wrote, one a line.
func mcpReplies(t *testing.T, stdout string) []mcpReply {
	t.Helper()
	var out []mcpReply
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var r mcpReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("reply %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestMCPSurvivesAMalformedLine: a line that is not JSON gets a JSON-RPC
// parse error (-32700, id null) and the server keeps serving: the requests
// before and after it are answered, and it exits 0 at the end of stdin.
func TestMCPSurvivesAMalformedLine(t *testing.T) {
	t.Parallel()
	c := pausedStudy(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		"garbage",
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	}, "\n") + "\n"
	r := sj(t, in, "mcp", "--campaign", c.dir)
	ids := map[string]bool{}
	parseErrors := 0
	for _, rep := range mcpReplies(t, r.stdout) {
		switch {
		case string(rep.ID) == "null" && strings.Contains(string(rep.Error), `"code":-32700`):
			parseErrors++
		case rep.Error == nil:
			ids[string(rep.ID)] = true
		}
	}
	if r.code != 0 || parseErrors != 1 || !ids["1"] || !ids["2"] || !ids["3"] {
		t.Errorf("want replies to 1, 2 and 3, one parse error and exit 0; got %s", r)
	}
}
