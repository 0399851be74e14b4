package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyTurnAndReviewLogs runs a command-agent study to completion,
// then edits a worker turn's stdout.log and the review's stdout.log (the
// reviewer's raw verdict): verify must exit 1 naming each file. Restored,
// the study verifies again (exit 0).
func TestVerifyTurnAndReviewLogs(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "cubes")
	if r := sj(t, "", c.args(300, 120)...); r.code != 0 {
		t.Fatalf("cubes study: want exit 0, got %s", r)
	}
	if r := sj(t, "", "verify", "--campaign", c.dir); r.code != 0 {
		t.Fatalf("verify of the untouched study: want exit 0, got %s", r)
	}
	reviews, err := filepath.Glob(filepath.Join(c.dir, "supervisor", "review-*", "stdout.log"))
	if err != nil || len(reviews) == 0 {
		t.Fatalf("the study kept no review stdout.log (%v)", err)
	}
	edited := map[string]string{ // file → the finding verify must print
		filepath.Join(c.dir, "supervisor", "turn-00001", "stdout.log"): "supervisor/turn-00001/stdout.log changed since its turn ended",
		reviews[0]: "supervisor/" + filepath.Base(filepath.Dir(reviews[0])) + "/stdout.log changed since its review attempt ended",
	}
	orig := map[string][]byte{}
	for path := range edited {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		orig[path] = body
		writeBytes(t, path, []byte(strings.ReplaceAll(string(body), "approved", "rejected")+"forged\n"))
	}
	r := sj(t, "", "verify", "--campaign", c.dir)
	t.Logf("verify after editing the logs: exit %d\n%s", r.code, r.stdout)
	if r.code != 1 {
		t.Errorf("verify after editing a turn's and a review's stdout.log: want exit 1, got %s", r)
	}
	for _, want := range edited {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("verify does not say %q: %s", want, r)
		}
	}
	for path, body := range orig {
		writeBytes(t, path, body)
	}
	if r := sj(t, "", "verify", "--campaign", c.dir); r.code != 0 {
		t.Errorf("verify with the logs restored: want exit 0, got %s", r)
	}
}
