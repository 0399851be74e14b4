package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// freshRequests are the worker requests that open a turn (their last
// message is the turn's prompt).
func freshRequests(reqs []llmRequest) []llmRequest {
	var out []llmRequest
	for _, r := range reqs {
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "user" {
			out = append(out, r)
		}
	}
	return out
}

// called reports whether an assistant message before the last message
// called the tool name, and whether a tool result follows it.
func called(r llmRequest, name string) bool {
	for i, m := range r.Messages[:len(r.Messages)-1] {
		for _, c := range m.ToolCalls {
			if c.Function.Name == name && i+1 < len(r.Messages) && r.Messages[i+1].Role == "tool" {
				return true
			}
		}
	}
	return false
}

// chars counts a request's conversation as the backend bounds it: the
// messages' text and their calls' names and arguments.
func chars(r llmRequest) int {
	n := 0
	for _, m := range r.Messages {
		n += utf8.RuneCountInString(m.text())
		for _, c := range m.ToolCalls {
			n += utf8.RuneCountInString(c.Function.Name) + utf8.RuneCountInString(c.Function.Arguments)
		}
	}
	return n
}

// TestAPIConversationCarriesAcrossTurns: the api worker's second turn is
// the first turn's conversation, continued: its request carries turn 1's
// guide, calls and results, and its own prompt is news only; the
// reviewer starts fresh.
func TestAPIConversationCarriesAcrossTurns(t *testing.T) {
	t.Parallel()
	s := newAPIStudy(t, nil)
	if r := sj(t, "", s.args(120, 30)...); r.code != 0 {
		t.Fatalf("study --backend api: want exit 0, got %s", r)
	}
	workers, reviewers := s.mock.requestsSeen()
	fresh := freshRequests(workers)
	if len(fresh) < 2 {
		t.Fatalf("want at least two worker turns, saw %d", len(fresh))
	}
	for _, r := range reviewers {
		if len(r.Messages) != 2 || r.Messages[0].Role != "system" || called(r, "run") {
			t.Errorf("a reviewer request carried %d messages; reviewers start fresh (system and packet)", len(r.Messages))
		}
	}
	if len(reviewers) == 0 {
		t.Error("no reviewer request was seen")
	}
	turn2 := fresh[1]
	last := turn2.Messages[len(turn2.Messages)-1].text()
	if turn2.Messages[0].Role != "system" || !strings.Contains(turn2.Messages[1].text(), "# Hypothesis") ||
		!called(turn2, "write_file") || !called(turn2, "run") || strings.Contains(last, "# Hypothesis") {
		t.Errorf("turn 2's request does not continue turn 1's conversation (%d messages; its prompt: %.200q)", len(turn2.Messages), last)
	}
	if stored, _ := filepath.Glob(filepath.Join(s.dir, "supervisor", "agent-state", "api-conversation-*.jsonl")); len(stored) != 1 {
		t.Errorf("want one stored conversation in the campaign, found %v", stored)
	}
}

// TestAPIMidTurnFailureResumesFromTheTranscript: the endpoint fails in the
// middle of turn 1 (after its status call ran); the supervisor retries,
// and the retried turn goes on from the stored conversation — turn 1's
// call and result included — and the study completes.
func TestAPIMidTurnFailureResumesFromTheTranscript(t *testing.T) {
	t.Parallel()
	s := newAPIStudy(t, nil)
	s.mock.mu.Lock() // the mock's server goroutines read it
	s.mock.midFaults = map[int]string{1: "500"}
	s.mock.mu.Unlock()
	if r := sj(t, "", s.args(120, 30)...); r.code != 0 {
		t.Fatalf("want exit 0 after the retry, got %s", r)
	}
	if snap := mustAPIStatus(t, s.dir); snap.Status != "completed" || snap.Provider.RetryCount != 1 {
		t.Fatalf("want completed after one retry:\n%s", snap.raw)
	}
	workers, _ := s.mock.requestsSeen()
	fresh := freshRequests(workers)
	if len(fresh) < 2 || !called(fresh[1], "status") || !strings.Contains(fresh[1].Messages[1].text(), "# Hypothesis") {
		t.Errorf("the retried turn did not resume the stored conversation of the failed one")
	}
}

// TestAPIConversationStaysUnderItsLimit: over a 30-turn study whose turns
// each leave a long note, no request carries more than the connection
// file's max_conversation_chars, older tool results give way to short
// notes, and the stored conversation stays within the limit too.
func TestAPIConversationStaysUnderItsLimit(t *testing.T) {
	t.Parallel()
	const limit = 20_000
	s := newAPIStudy(t, nil)
	s.mock.mu.Lock()
	s.mock.chatty = 29
	s.mock.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"base_url": s.mock.srv.URL + "/v1", "api_key": s.key, "max_conversation_chars": limit})
	if err := os.WriteFile(s.conn, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := sj(t, "", s.args(300, 30)...); r.code != 0 {
		t.Fatalf("study: want exit 0, got %s", r)
	}
	reqs, _ := s.mock.requestsSeen()
	most, summarised := 0, false
	for _, r := range reqs {
		most = max(most, chars(r))
		for _, m := range r.Messages {
			summarised = summarised || strings.Contains(m.text(), "dropped to keep the conversation under its size limit")
		}
	}
	if n := len(freshRequests(reqs)); n < 30 {
		t.Fatalf("want at least 30 worker turns, saw %d", n)
	}
	if most > limit || !summarised {
		t.Errorf("the largest request carried %d characters (limit %d); summarised older results: %v", most, limit, summarised)
	}
	if stored := storedChars(t, s.dir); stored > limit {
		t.Errorf("the stored conversation holds %d characters, over its limit %d", stored, limit)
	}
	t.Logf("%d worker requests, the largest %d characters", len(reqs), most)
}

// storedChars counts the stored conversation's characters.
func storedChars(t *testing.T, dir string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "supervisor", "agent-state", "api-conversation-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one stored conversation, found %v", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			Msg struct {
				Content   string `json:"content"`
				Reasoning string `json:"reasoning"`
			} `json:"msg"`
			Calls []struct{ Name, Arguments string } `json:"tool_calls"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(fmt.Errorf("stored conversation line: %w", err))
		}
		n += utf8.RuneCountInString(l.Msg.Content) + utf8.RuneCountInString(l.Msg.Reasoning)
		for _, c := range l.Calls {
			n += utf8.RuneCountInString(c.Name) + utf8.RuneCountInString(c.Arguments)
		}
	}
	return n
}
