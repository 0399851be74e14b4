package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/e2e/mockresponses"
)

// TestCodexStructuredStudy: the real Codex CLI against the mock model
// completes a structured study. The first falsifier assignment's two turns
// share one thread; the second assignment starts a fresh one; the judge's
// sessions get no lab tool, and the judge stream that contains a tool call
// is rejected, the tool-free one accepted.
func TestCodexStructuredStudy(t *testing.T) {
	t.Parallel()
	exe := codex(t)
	mock := mockresponses.New(mockresponses.Structured())
	defer mock.Close()
	c := newCampaign(t, "codex")
	reapMarker(t, c.dir)
	_, homeEnv := codexHome(t, mock.URL)
	r := runWith(t, homeEnv, 4*time.Minute, "study", "--campaign", c.dir, "--mode", "structured",
		"--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "codex", "--executable", exe, "--model", "mock-model", "--judge-model", "mock-judge",
		"--execution-backend", "bubblewrap", "--wall-seconds", "300", "--turn-seconds", "120", "--batch")
	logConversation(t, mock.Requests())
	if r.code != 0 {
		t.Fatalf("structured study --backend codex: %s\n%s", r, turnLogs(c.dir))
	}
	l := readLedger(t, bin, c.dir, nil)
	if l.Status != "completed" || !strings.HasPrefix(l.ledger(), "claim root scientific root supported decisive=1") {
		t.Fatalf("status %s, ledger %s\n%s", l.Status, l.ledger(), turnLogs(c.dir))
	}
	if len(l.Assignments) != 2 || l.Assignments[0].Handoff == nil || l.Assignments[0].Handoff.Outcome != "inconclusive" {
		t.Errorf("assignments %s, want two falsifiers, the first handed off", l.ledger())
	}
	checkStructuredThreads(t, mock.Requests())
	checkJudgeSessions(t, c.dir, mock.Requests())
	if t.Failed() {
		logs, _ := filepath.Glob(filepath.Join(c.dir, "supervisor", "*", "stdout.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b)
		}
	}
}

// checkStructuredThreads: the first assignment's turns share a thread; the
// second assignment's first request is a new thread without that conversation.
func checkStructuredThreads(t *testing.T, reqs []mockresponses.Request) {
	t.Helper()
	threads := map[string]string{} // call id → thread of the request that carried its output
	for _, r := range reqs {
		for _, id := range []string{mockresponses.CallWrite, mockresponses.CallRun, mockresponses.CallLink} {
			if _, ok := r.Output(id); ok && threads[id] == "" {
				threads[id] = r.Thread()
			}
		}
	}
	w, run, link := threads[mockresponses.CallWrite], threads[mockresponses.CallRun], threads[mockresponses.CallLink]
	if w == "" || run != w || link == "" || link == w {
		t.Errorf("threads: write %q, run %q (want the same: one assignment, resumed), link %q (want a fresh one)", w, run, link)
	}
	for _, r := range reqs {
		if _, ok := r.Output(mockresponses.CallLink); ok && hasCall(r, mockresponses.CallWrite) {
			t.Errorf("the second assignment's session carries the first one's conversation")
		}
	}
}

// checkJudgeSessions: two judge attempts on threads of their own, offered
// no lab tool; the first (with a shell call) was rejected for its tool use.
func checkJudgeSessions(t *testing.T, dir string, reqs []mockresponses.Request) {
	t.Helper()
	threads := map[string]bool{}
	for _, r := range reqs {
		if !r.Mentions(mockresponses.JudgeMarker) {
			continue
		}
		threads[r.Thread()] = true

		if r.HasTool(mockresponses.LabNamespace, "run") || r.HasTool(mockresponses.LabNamespace, "status") || r.Model != "mock-judge" {
			t.Errorf("a judge request offers lab tools or another model (%s)", r.Model)
		}
	}
	if len(threads) != 2 {
		t.Errorf("%d judge threads, want 2 (the rejected attempt and the accepted one)", len(threads))
	}
	checkSupportRejectedOnce(t, dir, "used 1 tool")
}
