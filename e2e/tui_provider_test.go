package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rowWith is the first line of scr that contains text.
func rowWith(scr, text string) string {
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}

// TestTUIAttentionMessageReadsWholeAt80Columns: a study stopped by a 401
// lists on home with its status, backend and time left in their own
// columns; its dashboard at 80×24 wraps the attention message under the
// header and says how to read it all, and enter on the Study pane shows
// the message whole.
func TestTUIAttentionMessageReadsWholeAt80Columns(t *testing.T) {
	t.Parallel()
	s := newFaultStudy(t, "* fail HTTP 401 Unauthorized: Incorrect API key provided: sk-test-1234; "+
		"check the key configured for this account and the organisation it belongs to\n")
	if r := sj(t, "", s.args(600)...); r.code != 1 {
		t.Fatalf("a 401: want exit 1, got %s", r)
	}
	snap := mustAPIStatus(t, s.dir)
	if snap.Status != "paused_external_error" || snap.Provider.Attention == nil {
		t.Fatalf("want paused_external_error with an attention message:\n%s", snap.raw)
	}
	attention := *snap.Provider.Attention
	ws := filepath.Dir(s.dir)
	scr := tuiScreenSized(t, 80, 24, append(tuiEnv(), "SIMJECTURE_WORKSPACE="+ws), bin, "tui")
	home := scr.waitText(10*time.Second, "STATUS", "paused_external_error")
	row, head := []rune(rowWith(home, "paused_external_error")), rowWith(home, "STATUS")
	for _, col := range []string{"BACKEND", "LEFT"} {
		// The header is ASCII, so its byte index is its column.
		if i := strings.Index(head, col); i < 0 || len(row) <= i || row[i] == ' ' || row[i-1] != ' ' {
			t.Errorf("home's %s column does not line up with the row of a paused_external_error study:\n%s\n%s", col, head, string(row))
		}
	}
	if !strings.Contains(string(row), "Bubblewrap · isolated") {
		t.Errorf("home's row lost its backend: %q", row)
	}
	scr.keys("Enter")
	dash := scr.waitText(10*time.Second, "PAUSED_EXTERNAL_ERROR", "⚠ needs attention: Authentication", "enter on Study shows it all")
	t.Logf("the dashboard of a 401 study at 80×24:\n%s", dash)
	scr.keys("BTab")
	scr.waitText(5*time.Second, "▶ Study")
	scr.keys("Enter")
	detail := scr.waitFlat(5*time.Second, "Study study", "attention", attention)
	if !strings.Contains(detail, "lines 1–") {
		t.Errorf("the Study detail does not say where it is:\n%s", detail)
	}
	scr.keys("Escape")
	scr.waitText(5*time.Second, "▶ Study")
	scr.keys("q")
	scr.waitText(5*time.Second, "studies in ")
	scr.keys("q")
	scr.waitExit(5 * time.Second)
}

// TestTUIProviderLineAfterAPauseDuringRetries: the dashboard of a study
// whose agent keeps failing with 503 counts the retry down; `p` pauses it
// during the wait, and the provider line then says paused with its retries,
// never `ok (N retries…)`.
func TestTUIProviderLineAfterAPauseDuringRetries(t *testing.T) {
	t.Parallel()
	s := newFaultStudy(t, "* fail HTTP 503 Service Unavailable: overloaded\n")
	sup := start(t, s.args(600)...)
	waitFor(t, 20*time.Second, "the study to run", func() bool {
		snap, ok := apiStatus(t, s.dir)
		return ok && snap.Status == "running"
	})
	scr := tuiScreenSized(t, 80, 24, tuiEnv(), bin, "tui", "--campaign", s.dir)
	scr.waitText(20*time.Second, "RUNNING", "⚠ Reconnecting provider (attempt ", "s to retry)", "attached")
	scr.keys("p")
	if r := sup.wait(t, 10*time.Second); r.code != 0 {
		t.Fatalf("paused during a retry wait: want exit 0, got %s", r)
	}
	paused := scr.waitText(10*time.Second, "PAUSED", "Provider: paused · ", "retries")
	line := rowWith(paused, "Provider:")
	if strings.Contains(line, "ok") || strings.Contains(paused, "Reconnecting") {
		t.Errorf("after the pause the provider line reads %q:\n%s", line, paused)
	}
	snap := mustAPIStatus(t, s.dir)
	if snap.Status != "paused" || snap.Provider.RetryCount < 1 {
		t.Errorf("want paused after at least one retry:\n%s", snap.raw)
	}
	scr.keys("q")
	scr.waitExit(5 * time.Second)
}
