package e2e

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/simjecture/simjecture/e2e/npmcli"
)

// This file holds what the tests of the CLI agent backends (codex,
// claude) share: the pinned CLI installation and the checks of a study's
// outcome.

// pinnedCLI is an agent CLI from npm, installed at most once per test run.
type pinnedCLI struct {
	pkg        npmcli.Package
	once       sync.Once
	path, skip string
	err        error
}

func newPinnedCLI(pkg npmcli.Package) *pinnedCLI { return &pinnedCLI{pkg: pkg} }

// get returns the path of the installed CLI, installing it first if
// needed; the test is skipped only when npm cannot reach its registry.
func (c *pinnedCLI) get(t *testing.T) string {
	t.Helper()
	c.once.Do(func() { c.path, c.skip, c.err = c.pkg.Install() })
	switch {
	case c.skip != "":
		t.Skip(c.skip)
	case c.err != nil:
		t.Fatal(c.err)
	}
	return c.path
}

// checkCompletedAfterRetry: the study completed after at least one
// provider retry.
func checkCompletedAfterRetry(t *testing.T, dir string, r result) {
	t.Helper()
	if r.code != 0 || status(t, dir).Status != "completed" {
		t.Fatalf("want a completed study after the provider failure, got %s\n%s", r, turnLogs(dir))
	}
	if retries, _ := providerState(t, dir); retries < 1 {
		t.Errorf("retry_count %d, want at least 1", retries)
	}
}

// checkRootSupported: the study exited 0, completed, with the root claim
// supported by succeeded experiments.
func checkRootSupported(t *testing.T, dir string, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("study: want exit 0, got %s\n%s", r, turnLogs(dir))
	}
	snap := status(t, dir)
	if snap.Status != "completed" {
		t.Fatalf("status %q, want completed\n%s", snap.Status, turnLogs(dir))
	}
	if root, _ := snap.claim("root"); root.Status != "supported" {
		t.Errorf("root claim %q, want supported", root.Status)
	}
	checkReceipts(t, snap, "succeeded")
}

// threeTurns finds the first request of worker turn 1, the first of a
// resumed worker turn 2 and the reviewer's first, among a mock's requests.
func threeTurns[R any](t *testing.T, reqs []R, isReviewer, isResumed func(R) bool) (first, resumed, reviewer int, ok bool) {
	t.Helper()
	first, resumed, reviewer = -1, -1, -1
	for i, r := range reqs {
		switch {
		case isReviewer(r):
			reviewer = pick(reviewer, i)
		case isResumed(r):
			resumed = pick(resumed, i)
		case first < 0:
			first = i
		}
	}
	if first < 0 || resumed < 0 || reviewer < 0 {
		t.Fatalf("the mock did not see turn 1 (%d), a resumed turn 2 (%d) and a reviewer (%d) among %d requests", first, resumed, reviewer, len(reqs))
		return 0, 0, 0, false
	}
	return first, resumed, reviewer, true
}

// usageSnap is the agent backend and usage of a status snapshot.
type usageSnap struct {
	Usage struct {
		InputTokens  *int64 `json:"input_tokens"`
		OutputTokens *int64 `json:"output_tokens"`
	} `json:"usage"`
	AgentBackend     string `json:"agent_backend"`
	RecordProtection string `json:"record_protection"`
}

func usageOf(t *testing.T, statusJSON string) usageSnap {
	t.Helper()
	var snap usageSnap
	if err := json.Unmarshal([]byte(statusJSON), &snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

// checkNeedsOperator: the study stopped for the operator (exit 1,
// paused_external_error) with this error category, and was not retried.
func checkNeedsOperator(t *testing.T, dir string, r result, category string) {
	t.Helper()
	if r.code != 1 {
		t.Fatalf("want exit 1 (needs the operator), got %s", r)
	}
	if s := status(t, dir); s.Status != "paused_external_error" {
		t.Errorf("status %q, want paused_external_error", s.Status)
	}
	if retries, got := providerState(t, dir); got != category || retries != 0 {
		t.Errorf("error_category %q, retry_count %d; want %s, 0", got, retries, category)
	}
}
