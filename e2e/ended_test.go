package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// endedFiles are what an ended study's record must keep as it is.
func endedFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range []string{"report.json", "LEDGER.md"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// checkEndedStudyUnchanged runs the writing commands on an ended study:
// each lab call that would write the record is refused (ok false, exit 1,
// one line), pause and cancel say it has already ended (exit 0), nothing
// is rewritten and verify still finds the record intact.
func checkEndedStudyUnchanged(t *testing.T, dir, status string) {
	t.Helper()
	before := endedFiles(t, dir)
	calls := map[string]string{
		"note":   `{"statement":"a note for test","kind":"observation"}`,
		"commit": `{"statement":"a repair after the end"}`,
		"run":    `{"source":"sim.py","outputs":["o.txt"]}`,
	}
	for call, stdin := range calls {
		r := sj(t, stdin, "lab", call, "--campaign", dir)
		var reply struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &reply); err != nil || r.code != 1 || reply.OK ||
			!strings.Contains(reply.Error, "study is "+status+"; it takes no new work") || len(lines(r.stdout)) != 1 {
			t.Errorf("lab %s on a %s study: want ok:false, exit 1, one line saying it takes no new work:\n%s", call, status, r)
		}
	}
	for _, cmd := range []string{"pause", "cancel"} {
		r := sj(t, "", cmd, "--campaign", dir)
		want := "study " + dir + " has already ended (" + status + ")\n"
		if r.code != 0 || r.stdout != want {
			t.Errorf("%s on a %s study: want exit 0 and %q:\n%s", cmd, status, want, r)
		}
	}
	for name, b := range endedFiles(t, dir) {
		if !bytes.Equal(b, before[name]) {
			t.Errorf("%s of the %s study was rewritten", name, status)
		}
	}
	if r := sj(t, "", "verify", "--campaign", dir); r.code != 0 {
		t.Errorf("verify after the refused calls: want exit 0:\n%s", r)
	}
}

// checkNoTimeLeft: status of an ended study says it ended, and
// remaining_seconds is 0.
func checkNoTimeLeft(t *testing.T, dir, status string) {
	t.Helper()
	r := sj(t, "", "status", "--campaign", dir, "--json")
	var snap struct {
		Status           string `json:"status"`
		RemainingSeconds *int64 `json:"remaining_seconds"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil || r.code != 0 {
		t.Fatalf("status --json: %v\n%s", err, r)
	}
	if snap.Status != status || snap.RemainingSeconds == nil || *snap.RemainingSeconds != 0 {
		t.Errorf("status --json of the %s study: status %q, remaining_seconds %v; want %s and 0", status, snap.Status, snap.RemainingSeconds, status)
	}
	r = sj(t, "", "status", "--campaign", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "ended ("+status+")") || strings.Contains(r.stdout, "s left") {
		t.Errorf("status of the %s study: want it to say ended (%s), no time left:\n%s", status, status, r)
	}
}

// TestLabWritesRefusedOnTheReplayRecord is the QA repro: on the bundled
// demo record, `lab note` used to be accepted and break verify.
func TestLabWritesRefusedOnTheReplayRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rp")
	if r := sj(t, "", "demo", "--replay", dir, "--batch"); r.code != 0 {
		t.Fatalf("demo --replay: %s", r)
	}
	checkEndedStudyUnchanged(t, dir, "completed")
	checkNoTimeLeft(t, dir, "completed")
	for _, call := range [][]string{{"status", `{}`}, {"brief", `{}`}, {"notes", `{}`}} {
		if r := sj(t, call[1], "lab", call[0], "--campaign", dir); r.code != 0 || !strings.HasPrefix(r.stdout, `{"ok":true`) {
			t.Errorf("lab %s on the record: want an answer:\n%s", call[0], r)
		}
	}
}

// TestCancelledStudyBeforeItsDeadline: a study cancelled long before its
// deadline has no time left, and takes nothing more.
func TestCancelledStudyBeforeItsDeadline(t *testing.T) {
	c := pausedStudy(t)
	if r := sj(t, "", "cancel", "--campaign", c.dir); r.code != 0 || !strings.Contains(r.stdout, "it is now cancelled") {
		t.Fatalf("cancel of the paused study: %s", r)
	}
	if s := status(t, c.dir); !s.Deadline.After(time.Now().Add(30 * time.Second)) {
		t.Fatalf("deadline %s is too near: the case shows nothing", s.Deadline)
	}
	checkNoTimeLeft(t, c.dir, "cancelled")
	checkEndedStudyUnchanged(t, c.dir, "cancelled")
}
