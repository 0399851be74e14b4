package engine

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeLog(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendLog(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

// TestReadLogIsBounded reads files of every size against a 1 KiB window:
// no read returns more than the window, and what it returns is the file's
// head and tail, or what was appended since the cursor.
func TestReadLogIsBounded(t *testing.T) {
	const window = 1024
	tests := []struct {
		name                  string
		size                  int
		cursor                int64 // -1: a fresh reader
		wantHead, wantData    int
		wantSkipped, wantNext int64
		wantReset             bool
	}{
		{"small file, fresh", 100, -1, 0, 100, 0, 100, true},
		{"exactly a window", window, -1, 0, window, 0, window, true},
		{"larger than a window, fresh", 5000, -1, 512, 512, 5000 - window, 5000, true},
		{"appended a little", 5000, 4900, 0, 100, 0, 5000, false},
		{"appended more than a window", 5000, 100, 0, window, 5000 - window - 100, 5000, false},
		{"nothing new", 5000, 5000, 0, 0, 0, 5000, false},
		{"shrank under the cursor", 300, 5000, 0, 300, 0, 300, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stdout.log")
			data := bytes.Repeat([]byte("0123456789abcdef"), tt.size/16+1)[:tt.size]
			writeLog(t, path, data)
			cur := LogCursor{Path: path, Offset: tt.cursor}
			if tt.cursor < 0 {
				cur = LogCursor{}
			}
			ch, err := ReadLog(path, cur, window)
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.Head) != tt.wantHead || len(ch.Data) != tt.wantData || ch.Skipped != tt.wantSkipped ||
				ch.Next.Offset != tt.wantNext || ch.Reset != tt.wantReset {
				t.Fatalf("head %d data %d skipped %d next %d reset %v; want %d %d %d %d %v", len(ch.Head), len(ch.Data),
					ch.Skipped, ch.Next.Offset, ch.Reset, tt.wantHead, tt.wantData, tt.wantSkipped, tt.wantNext, tt.wantReset)
			}
			if len(ch.Head)+len(ch.Data) > window {
				t.Fatalf("read %d bytes, over the %d-byte window", len(ch.Head)+len(ch.Data), window)
			}
			if !bytes.Equal(ch.Head, data[:len(ch.Head)]) || !bytes.HasSuffix(data, ch.Data) {
				t.Fatal("the head or the data is not the file's head or tail")
			}
		})
	}
}

// TestReadLogOfAHugeFile reads a 50 MiB log with the production window:
// the first read holds LogWindow bytes, and following it after 10 more
// lines reads exactly those lines.
func TestReadLogOfAHugeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout.log")
	line := []byte(strings.Repeat("x", 99) + "\n")
	writeLog(t, path, bytes.Repeat(line, 50<<20/len(line)))
	ch, err := ReadLog(path, LogCursor{}, LogWindow)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ch.Head) + len(ch.Data); got != LogWindow {
		t.Fatalf("the first read of a 50 MiB log holds %d bytes, want %d", got, LogWindow)
	}
	if ch.Skipped < 49<<20 {
		t.Fatalf("skipped %d bytes, want the middle of the file", ch.Skipped)
	}
	appendLog(t, path, []byte(strings.Repeat("tick\n", 10)))
	next, err := ReadLog(path, ch.Next, LogWindow)
	if err != nil {
		t.Fatal(err)
	}
	if string(next.Data) != strings.Repeat("tick\n", 10) || next.Reset || next.Skipped != 0 {
		t.Fatalf("the follow-up read = %q (reset %v, skipped %d), want the 10 appended lines", next.Data, next.Reset, next.Skipped)
	}
}

// TestLocateLogs finds a running experiment in its run folder, a finished
// one in its artifact folder, and refuses ids that could leave the campaign.
func TestLocateLogs(t *testing.T) {
	dir := t.TempDir()
	c := Campaign{Dir: dir}
	running, finished := "exp_"+strings.Repeat("a", 24), "exp_"+strings.Repeat("b", 24)
	writeLog(t, filepath.Join(c.Scratch(), running, "stdout.log"), []byte("tick 1\n"))
	writeLog(t, filepath.Join(c.ArtifactDir(running), "stdout.log"), []byte("old\n"))
	writeLog(t, filepath.Join(c.ArtifactDir(finished), "stdout.log"), []byte("done\n"))
	tests := []struct {
		name     string
		target   LogTarget
		wantDir  string
		wantLive bool
		wantErr  bool
	}{
		{"running", LogTarget{Experiment: running}, filepath.Join(c.Scratch(), running), true, false},
		{"finished", LogTarget{Experiment: finished}, c.ArtifactDir(finished), false, false},
		{"queued", LogTarget{Experiment: "exp_" + strings.Repeat("c", 24)}, "", false, false},
		{"turn", LogTarget{Turn: 7}, filepath.Join(dir, "supervisor", "turn-00007"), true, false},
		{"traversal", LogTarget{Experiment: "../../etc"}, "", false, true},
		{"turn zero", LogTarget{}, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := LocateLogs(dir, tt.target)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil || p.Dir != tt.wantDir || p.Live != tt.wantLive {
				t.Fatalf("LocateLogs = %+v, %v; want %s live=%v", p, err, tt.wantDir, tt.wantLive)
			}
		})
	}
}

// TestReadLogsFollowsAnExperimentToItsArtifacts reads a running
// experiment, then the same after its run folder is gone: the reader is
// told to start over with the collected logs.
func TestReadLogsFollowsAnExperimentToItsArtifacts(t *testing.T) {
	dir := t.TempDir()
	c := Campaign{Dir: dir}
	id := "exp_" + strings.Repeat("d", 24)
	writeLog(t, filepath.Join(c.Scratch(), id, "stdout.log"), []byte("tick 1\n"))
	target := LogTarget{Experiment: id}
	r, err := ReadLogs(dir, target, nil, LogWindow)
	if err != nil || !r.Place.Live || string(r.Chunks[0].Data) != "tick 1\n" || !r.Chunks[1].Missing {
		t.Fatalf("running read = %+v, %v", r, err)
	}
	curs := []LogCursor{r.Chunks[0].Next, r.Chunks[1].Next}
	writeLog(t, filepath.Join(c.ArtifactDir(id), "stdout.log"), []byte("tick 1\ntick 2\n"))
	writeLog(t, filepath.Join(c.ArtifactDir(id), "stderr.log"), nil)
	if err := os.RemoveAll(filepath.Join(c.Scratch(), id)); err != nil {
		t.Fatal(err)
	}
	r, err = ReadLogs(dir, target, curs, LogWindow)
	if err != nil || r.Place.Live || !r.Chunks[0].Reset || string(r.Chunks[0].Data) != "tick 1\ntick 2\n" {
		t.Fatalf("finished read = %+v, %v", r, err)
	}
}

func TestTranscriptLines(t *testing.T) {
	tests := []struct {
		name, line string
		want       []string
	}{
		{"plain text", "hello world", []string{"hello world"}},
		{"json that is no event", `{"x":1}`, []string{`{"x":1}`}},
		{"agent message", `{"type":"item.completed","item":{"type":"agent_message","text":"I will run it.\nThen review."}}`,
			[]string{"agent: I will run it.", "       Then review."}},
		{"command", `{"type":"item.completed","item":{"type":"command_execution","command":"ls","aggregated_output":"a\nb\n","exit_code":0}}`,
			[]string{"$ ls  (exit 0)", "  a", "  b"}},
		{"tool call", `{"type":"item.completed","item":{"type":"mcp_tool_call","server":"lab","tool":"run","arguments":{"source":"a.py"}}}`,
			[]string{`tool: lab.run {"source":"a.py"}`}},
		{"started is silent", `{"type":"item.started","item":{"type":"command_execution","command":"ls"}}`, nil},
		{"usage", `{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":3}}`,
			[]string{"── turn completed (10 input, 3 output tokens)"}},
		{"error", `{"type":"error","message":"boom"}`, []string{"error: boom"}},
		{"claude session", `{"type":"system","subtype":"init","session_id":"s-1","tools":[]}`, []string{"── session s-1"}},
		{"claude text and tool", `{"type":"assistant","message":{"content":[{"type":"text","text":"Run it."},` +
			`{"type":"tool_use","name":"mcp__simjecture__run","input":{"source":"a.py"}}]}}`,
			[]string{"agent: Run it.", `tool: mcp__simjecture__run {"source":"a.py"}`}},
		{"claude tool result", `{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"{\"ok\":true}"}]}]}}`,
			[]string{"result:", `  {"ok":true}`}},
		{"claude api error", `{"type":"assistant","is_api_error_message":true,"message":{"content":[{"type":"text","text":"Invalid API key"}]}}`,
			[]string{"error: Invalid API key"}},
		{"claude usage", `{"type":"result","is_error":false,"result":"done","usage":{"input_tokens":11,"output_tokens":7}}`,
			[]string{"── turn completed (11 input, 7 output tokens)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TranscriptLines(tt.line)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Fatalf("TranscriptLines = %q, want %q", got, tt.want)
			}
		})
	}
}
