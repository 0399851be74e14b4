package api

import (
	"os"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/provider"
)

func startConv(t *testing.T, dir string) *conversation {
	t.Helper()
	c, lost, err := openConversation(dir, "", "sk-secret")
	if err != nil || lost {
		t.Fatalf("new conversation: lost %v, %v", lost, err)
	}
	t.Cleanup(c.Close)
	return c
}

func reopen(t *testing.T, dir, id string) *conversation {
	t.Helper()
	c, lost, err := openConversation(dir, id, "sk-secret")
	if err != nil || lost {
		t.Fatalf("reopen %s: lost %v, %v", id, lost, err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestConversationSurvivesATornTail: a line cut short (a supervisor killed
// while writing it) or altered ends the conversation at the last good
// line; what follows is appended after it, and the key is never stored.
func TestConversationSurvivesATornTail(t *testing.T) {
	tests := []struct {
		name   string
		damage func(b []byte) []byte
		keep   int
	}{
		{"intact", func(b []byte) []byte { return b }, 3},
		{"torn last line", func(b []byte) []byte { return b[:len(b)-7] }, 2},
		{"altered middle line", func(b []byte) []byte {
			return []byte(strings.Replace(string(b), "second", "SECOND", 1))
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := startConv(t, dir)
			for _, s := range []string{"first", "second", "third with sk-secret"} {
				if err := c.add(msg{Role: "user", Content: s, Turn: 1}); err != nil {
					t.Fatal(err)
				}
			}
			b, _ := os.ReadFile(c.path)
			if strings.Contains(string(b), "sk-secret") {
				t.Fatal("the key was stored")
			}
			if err := os.WriteFile(c.path, tc.damage(b), 0o600); err != nil {
				t.Fatal(err)
			}
			again := reopen(t, dir, c.id)
			if len(again.msgs) != tc.keep {
				t.Fatalf("loaded %d messages, want %d", len(again.msgs), tc.keep)
			}
			if err := again.add(msg{Role: "user", Content: "after", Turn: 2}); err != nil {
				t.Fatal(err)
			}
			if third := reopen(t, dir, c.id); len(third.msgs) != tc.keep+1 || third.msgs[tc.keep].Content != "after" {
				t.Errorf("after appending: %d messages", len(third.msgs))
			}
		})
	}
}

// TestConversationLost: a cursor whose file is gone starts a new
// conversation and says so.
func TestConversationLost(t *testing.T) {
	c, lost, err := openConversation(t.TempDir(), convPrefix+"0011223344556677", "")
	if err != nil || !lost || len(c.msgs) != 0 {
		t.Fatalf("lost %v, %d messages, %v", lost, len(c.msgs), err)
	}
	c.Close()
}

// TestBounded: tool results of earlier turns go first, then earlier turns;
// the system message, the first prompt and the current turn stay.
func TestBounded(t *testing.T) {
	big := strings.Repeat("x", 5000)
	var msgs []msg
	msgs = append(msgs, msg{Role: "system", Content: "sys", Turn: 1}, msg{Role: "user", Content: "guide", Turn: 1})
	for turn := 1; turn <= 10; turn++ {
		if turn > 1 {
			msgs = append(msgs, msg{Role: "user", Content: "news", Turn: turn})
		}
		msgs = append(msgs, msg{Role: "assistant", Calls: []toolCall{{id: "c", name: "status", args: "{}"}}, Turn: turn},
			msg{Role: "tool", Content: big, CallID: "c", Tool: "status", Turn: turn},
			msg{Role: "assistant", Content: strings.Repeat("y", 1000), Turn: turn, Done: true})
	}
	tests := []struct {
		name      string
		limit     int
		wantNotes bool
		wantTurns int // distinct turns left
	}{
		{"fits", 1 << 20, false, 10},
		{"tool results summarised", 20_000, true, 10},
		{"turns dropped", 8_000, true, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := bounded(msgs, tc.limit, 10)
			if total(got) > tc.limit {
				t.Errorf("%d characters, over the limit %d", total(got), tc.limit)
			}
			turns := map[int]bool{}
			notes := false
			for _, m := range got {
				turns[m.Turn] = true
				notes = notes || strings.Contains(m.Content, "dropped to keep the conversation")
			}
			if len(turns) != tc.wantTurns || notes != tc.wantNotes || got[0].Role != "system" || got[1].Content != "guide" {
				t.Errorf("%d turns, notes %v, starts %s/%q", len(turns), notes, got[0].Role, got[1].Content)
			}
			if last := got[len(got)-2]; last.Turn != 10 || last.Content != big {
				t.Errorf("the current turn's tool result was touched")
			}
		})
	}
}

// TestRememberResumesAnExchange: a turn retried with the same prompt after
// a provider failure goes on from the stored messages; a new prompt is
// added after them; a lost tool result is answered.
func TestRememberResumesAnExchange(t *testing.T) {
	dir := t.TempDir()
	a := &Agent{cfg: Config{APIKey: "k"}}
	m1, err := a.remember(provider.Turn{Role: provider.RoleWorker, Number: 1, Prompt: "guide", StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := m1.add(msg{Role: "assistant", Calls: []toolCall{{id: "c1", name: "run", args: "{}"}}, Turn: 1}); err != nil {
		t.Fatal(err)
	}
	m1.Close()
	m2, err := a.remember(provider.Turn{Role: provider.RoleWorker, Number: 2, Prompt: "guide", StateDir: dir, Cursor: m1.id})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	roles := []string{}
	for _, m := range m2.msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "system user assistant tool" || m2.since != 1 {
		t.Errorf("resumed conversation %q (since turn %d), want system user assistant tool since 1", got, m2.since)
	}
	m3, err := a.remember(provider.Turn{Role: provider.RoleWorker, Number: 3, Prompt: "news", StateDir: dir, Cursor: m1.id})
	if err != nil {
		t.Fatal(err)
	}
	defer m3.Close()
	if n := len(m3.msgs); n != 5 || m3.msgs[4].Content != "news" || m3.since != 3 {
		t.Errorf("a new prompt: %d messages, last %q", n, m3.msgs[n-1].Content)
	}
}
