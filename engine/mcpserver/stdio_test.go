package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const (
	initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	toolsList   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	noteCall    = `{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"note","arguments":{"statement":"before EOF"}}}`
)

// TestStdioAnswersBeforeEOF gives the server its whole input at once, the
// end of input right behind the last request: every request is answered
// before Serve returns.
func TestStdioAnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		ids   []string
	}{
		{"initialize and tools/list", strings.Join([]string{initialize, initialized, toolsList}, "\n") + "\n", []string{"1", "2"}},
		{"a tool call without its newline", strings.Join([]string{initialize, initialized, noteCall}, "\n"), []string{"1", `"n"`}},
		{"nothing", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			if err := Serve(context.Background(), newLab(t), "test", Stdio(strings.NewReader(tt.input), &out)); err != nil {
				t.Fatalf("serve: %v", err)
			}
			got := replyIDs(t, out.String())
			if strings.Join(got, " ") != strings.Join(tt.ids, " ") {
				t.Errorf("replies to %v, want %v:\n%s", got, tt.ids, out.String())
			}
		})
	}
}

// replyIDs are the ids of the error-free replies in out, in order.
func replyIDs(t *testing.T, out string) []string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Error != nil || r.Result == nil {
			t.Errorf("reply %q: %v", line, err)
			continue
		}
		ids = append(ids, string(r.ID))
	}
	return ids
}

// TestOwedCounts: calls read are owed until their replies are written;
// notifications, replies to other ids and lines that do not decode owe
// nothing.
func TestOwedCounts(t *testing.T) {
	t.Parallel()
	reply := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":{}}` }
	tests := []struct {
		name    string
		read    []string // chunks, in order
		written []string
		settled bool
	}{
		{"a call and its reply", []string{toolsList + "\n"}, []string{reply("2") + "\n"}, true},
		{"a call unanswered", []string{toolsList + "\n"}, nil, false},
		{"a reply to another id", []string{toolsList + "\n"}, []string{reply("3") + "\n"}, false},
		{"a notification", []string{initialized + "\n"}, nil, true},
		{"a call split across reads", []string{toolsList[:10], toolsList[10:] + "\n"}, nil, false},
		{"a batch answered as a batch", []string{"[" + toolsList + "," + noteCall + "]\n"},
			[]string{"[" + reply("2") + "," + reply(`"n"`) + "]\n"}, true},
		{"a batch half answered", []string{"[" + toolsList + "," + noteCall + "]\n"}, []string{reply(`"n"`) + "\n"}, false},
		{"not JSON", []string{"{oops\n"}, nil, true},
		{"JSON but no message", []string{`{"id":3}` + "\n"}, nil, true},
		{"a reply split across writes", []string{toolsList + "\n"}, []string{reply("2")[:7], reply("2")[7:] + "\n"}, true},
		{"a reply not yet ended", []string{toolsList + "\n"}, []string{reply("2")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := newOwed()
			for _, chunk := range tt.read {
				d.count(d.in.feed([]byte(chunk)), true)
			}
			for _, chunk := range tt.written {
				d.count(d.out.feed([]byte(chunk)), false)
			}
			if got := d.settled(); got != tt.settled {
				t.Errorf("settled %v, want %v (owed %v)", got, tt.settled, d.ids)
			}
		})
	}
}

// TestStdioRefusesBadLines: a line that is not JSON, or JSON that is not a
// JSON-RPC message, gets a JSON-RPC error reply (id null) and the server
// goes on: the requests before and after it are answered.
func TestStdioRefusesBadLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, bad string
		code      int64
	}{
		{"garbage", "garbage", -32700},
		{"half an object", `{"jsonrpc":"2.0","id":7,`, -32700},
		{"an object that is no message", `{"hello":"world"}`, -32600},
		{"an empty batch", `[]`, -32600},
		{"a batch with a bad member", `[` + toolsList + `,{"x":1}]`, -32600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			after := strings.Replace(toolsList, `"id":2`, `"id":3`, 1)
			input := strings.Join([]string{initialize, initialized, toolsList, tt.bad, after}, "\n") + "\n"
			var out bytes.Buffer
			if err := Serve(context.Background(), newLab(t), "test", Stdio(strings.NewReader(input), &out)); err != nil {
				t.Fatalf("serve: %v", err)
			}
			var answered []string
			refusals := 0
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var r struct {
					ID    json.RawMessage `json:"id"`
					Error *struct {
						Code int64 `json:"code"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("reply %q: %v", line, err)
				}
				if r.Error != nil && string(r.ID) == "null" && r.Error.Code == tt.code {
					refusals++
					continue
				}
				answered = append(answered, string(r.ID))
			}
			slices.Sort(answered) // requests are handled concurrently
			if refusals != 1 || strings.Join(answered, " ") != "1 2 3" {
				t.Errorf("want replies to 1 2 3 and one refusal with code %d; got %v and %d:\n%s", tt.code, answered, refusals, out.String())
			}
		})
	}
}
