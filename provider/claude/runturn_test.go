package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
)

// fakeClaude is a stand-in for the CLI: a resume of any session fails as
// Claude Code's does when it has no record of it; otherwise it starts the
// session "fresh-1", keeps its prompt (stdin) and environment beside the
// script, and answers.
const fakeClaude = `#!/bin/sh
dir=$(dirname "$0")
for a in "$@"; do
  if [ "$a" = --resume ]; then
    echo '{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"gone"}'
    echo "No conversation found with session ID: gone" >&2
    exit 1
  fi
done
cat > "$dir/stdin.txt"
echo "$HOME $CLAUDE_CONFIG_DIR $CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC" > "$dir/env.txt"
echo '{"type":"system","subtype":"init","session_id":"fresh-1"}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"done"}]},"session_id":"fresh-1"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"fresh-1","usage":{"input_tokens":5,"cache_read_input_tokens":2,"output_tokens":3}}'
`

// TestLostSessionRunsANewOne: a worker resume of a session Claude Code no
// longer has is run again, in the same turn, as a new session told so.
func TestLostSessionRunsANewOne(t *testing.T) {
	bin := t.TempDir()
	exe := filepath.Join(bin, "claude")
	if err := os.WriteFile(exe, []byte(fakeClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	logs, state := t.TempDir(), t.TempDir()
	a := &Agent{Executable: exe, Grace: time.Second}
	out, err := a.RunTurn(context.Background(), provider.Turn{Role: provider.RoleWorker, Number: 2, Prompt: "news",
		Dir: t.TempDir(), LogDir: logs, StateDir: state, Cursor: "gone", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failure != nil || out.Cursor != "fresh-1" || out.LastLine != "done" || *out.InputTokens != 7 || *out.OutputTokens != 3 {
		t.Fatalf("outcome %+v (failure %+v), want the new session's", out, out.Failure)
	}
	stdin, _ := os.ReadFile(filepath.Join(bin, "stdin.txt"))
	if !strings.HasPrefix(string(stdin), lostSessionNote) || !strings.Contains(string(stdin), "news") {
		t.Errorf("the new session was asked %q", stdin)
	}
	if _, err := os.Stat(filepath.Join(logs+"-new-session", "stdout.log")); err != nil {
		t.Errorf("the new session's logs, beside the turn's: %v", err)
	}
	env, _ := os.ReadFile(filepath.Join(bin, "env.txt"))
	if want := filepath.Join(state, "home") + " " + filepath.Join(state, "config") + " 1\n"; string(env) != want {
		t.Errorf("environment %q, want %q", env, want)
	}
}
