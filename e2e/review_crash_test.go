package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crashingReviewer is a command agent that works as testdata/agent.py in
// cubes mode but whose reviewer notes each start beside itself, prints one
// line on stderr and exits 1.
const crashingReviewer = `#!/bin/sh
here=$(dirname "$0")
if [ "$SIMJECTURE_ROLE" = reviewer ]; then
	echo start >> "$here/reviewer_starts"
	echo "judge: segmentation fault while reading the packet" >&2
	exit 1
fi
exec python3 %q
`

// TestCrashingReviewerPausesAfterThreeAttempts: a reviewer that exits 1 on
// every packet is started at most 3 times, with a backoff between them that
// worker turns do not reset; the review keeps attempts 3 and the last stderr
// line, each attempt has its own log folder, and the study pauses for the
// operator naming the review.
func TestCrashingReviewerPausesAfterThreeAttempts(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "cubes")
	exe := filepath.Join(t.TempDir(), "crash_reviewer.sh")
	writeFile(t, exe, fmt.Sprintf(crashingReviewer, agent))
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	args := c.args(60, 30)
	for i, a := range args {
		if a == agent {
			args[i] = exe
		}
	}
	r := sj(t, "", args...)
	starts, _ := os.ReadFile(filepath.Join(filepath.Dir(exe), "reviewer_starts"))
	n := strings.Count(string(starts), "start")
	t.Logf("reviewer started %d times; study exited %d", n, r.code)
	if r.code != 1 || n == 0 || n > 3 {
		t.Fatalf("the reviewer was started %d times, want 1 to 3, and exit 1: %s", n, r)
	}
	var snap struct {
		Status   string `json:"status"`
		Provider struct {
			Attention *string `json:"attention"`
		} `json:"provider"`
		Reviews []struct {
			ID        string `json:"id"`
			Status    string `json:"status"`
			Attempts  int    `json:"attempts"`
			LastError string `json:"last_error"`
		} `json:"reviews"`
	}
	out := sj(t, "", "status", "--campaign", c.dir, "--json")
	if err := json.Unmarshal([]byte(out.stdout), &snap); err != nil || len(snap.Reviews) != 1 {
		t.Fatalf("status --json: %v\n%s", err, out.stdout)
	}
	rv := snap.Reviews[0]
	if rv.Status != "queued" || rv.Attempts != 3 || !strings.Contains(rv.LastError, "segmentation fault") {
		t.Errorf("want the review queued with attempts 3 and the stderr line as last_error: %+v", rv)
	}
	if snap.Status != "paused_external_error" || snap.Provider.Attention == nil ||
		!strings.Contains(*snap.Provider.Attention, rv.ID) || !strings.Contains(*snap.Provider.Attention, "segmentation fault") {
		t.Errorf("want paused_external_error naming %s and the stderr line:\n%s", rv.ID, out.stdout)
	}
	for i := 1; i <= 3; i++ {
		if _, err := os.Stat(filepath.Join(c.dir, "supervisor", fmt.Sprintf("review-%s-%d", rv.ID, i))); err != nil {
			t.Errorf("log folder of attempt %d: %v", i, err)
		}
	}
}
