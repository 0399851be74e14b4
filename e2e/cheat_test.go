package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cheaterStudy writes a structured study for testdata/cheater.py with the
// judge behaving as judgeMode, and returns its folder and study arguments.
func cheaterStudy(t *testing.T, judgeMode string) (string, []string) {
	t.Helper()
	tmp := t.TempDir()
	exe := filepath.Join(tmp, "cheater.py")
	copyExec(t, filepath.Join("testdata", "cheater.py"), exe)
	hyp, ins := filepath.Join(tmp, "h.txt"), filepath.Join(tmp, "i.txt")
	writeFile(t, hyp, "For every n >= 1, sum_{k=1..n} k^2 = n^2 (n+1) / 2.\n")
	writeFile(t, ins, "Falsify or support it by exact computation.\ne2e-judge: "+judgeMode+"\n")
	dir := filepath.Join(tmp, "study")
	return dir, []string{"study", "--campaign", dir, "--mode", "structured", "--hypothesis-file", hyp, "--instructions-file", ins,
		"--backend", "command", "--executable", exe, "--execution-backend", "bubblewrap",
		"--wall-seconds", "180", "--turn-seconds", "60", "--batch"}
}

// cheatEntry is one attempt of cheater.py.
type cheatEntry struct {
	Cheat     string          `json:"cheat"`
	OK        bool            `json:"ok"`
	Error     string          `json:"error"`
	Unchanged bool            `json:"unchanged"`
	Result    json.RawMessage `json:"result"`
}

// TestStructuredCheatsFail: a command agent completes a structured study
// of its own while trying to cheat through the lab; every attempt is a
// one-line lab error that changes nothing (a link that cannot count is
// recorded as not counting, and then decides nothing), and the judge's
// verdict for another claim is rejected.
func TestStructuredCheatsFail(t *testing.T) {
	t.Parallel()
	dir, args := cheaterStudy(t, "wrong-claim")
	if r := start(t, args...).wait(t, 3*time.Minute); r.code != 0 {
		t.Fatalf("structured study: %s", r)
	}
	snap := readLedger(t, bin, dir, nil)
	if snap.Status != "completed" {
		t.Fatalf("status %s; ledger %s", snap.Status, snap.ledger())
	}
	refused := map[string]string{
		"falsifier registers a scientific child":              "registers only instrument, diagnostic or control claims",
		"evidence run on an unapproved contract":              "is not approved by a contract review",
		"close as supported":                                  "supported is never a close",
		"handoff claiming support":                            "must be one of",
		"close falsified on links that do not count":          "needs a sufficient link that counts",
		"contract changed after approval then used":           "is not approved by a contract review",
		"repair scientist running an experiment":              "lab run is not a call of the repair_scientist",
		"repair without counterexamples":                      "needs at least one counterexample",
		"repair citing a link that does not count":            "is no sufficient, counting link",
		"evidence linked from a run made before its contract": "",
		"workbench run linked as sufficient":                  "",
	}
	seen := map[string]bool{}
	for _, e := range readCheats(t, filepath.Join(dir, "research", "cheats.jsonl")) {
		want, ok := refused[e.Cheat]
		seen[e.Cheat] = true
		switch {
		case !ok:
			t.Errorf("unexpected attempt %q", e.Cheat)
		case want == "" && (!e.OK || strings.Contains(string(e.Result), `"counts":true`)):
			t.Errorf("%s: want a link that does not count, got %+v", e.Cheat, e)
		case want != "" && (e.OK || !strings.Contains(e.Error, want) || strings.Contains(e.Error, "\n") || !e.Unchanged):
			t.Errorf("%s: want a one-line lab error containing %q that changes nothing, got %+v", e.Cheat, want, e)
		}
	}
	for name := range refused {
		if !seen[name] {
			t.Errorf("attempt %q was never made", name)
		}
	}
	checkJudgeRejectedWrongClaim(t, dir)
}

func readCheats(t *testing.T, path string) []cheatEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []cheatEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e cheatEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("cheats.jsonl: %v: %s", err, sc.Text())
		}
		out = append(out, e)
	}
	return out
}

// checkSupportRejectedOnce: report.json says the support review took two
// attempts, the first rejected with an error containing why.
func checkSupportRejectedOnce(t *testing.T, dir, why string) {
	t.Helper()
	out, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Reviews []struct {
			Stage     string `json:"stage"`
			Attempts  int    `json:"attempts"`
			LastError string `json:"last_error"`
		} `json:"reviews"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Reviews {
		if r.Stage == "support" && (r.Attempts != 2 || !strings.Contains(r.LastError, why)) {
			t.Errorf("support review: %d attempts, last error %q; want 2, the first rejected (%s)", r.Attempts, r.LastError, why)
		}
	}
}

// checkJudgeRejectedWrongClaim: the support review took two attempts (the
// first verdict named another claim), and the judge had no lab.
func checkJudgeRejectedWrongClaim(t *testing.T, dir string) {
	t.Helper()
	checkSupportRejectedOnce(t, dir, "verdict is for root")
	logs, _ := filepath.Glob(filepath.Join(dir, "supervisor", "support-review-*-1", "stdout.log"))
	if len(logs) != 1 {
		t.Fatalf("judge logs %v", logs)
	}
	b, _ := os.ReadFile(logs[0])
	if !strings.Contains(string(b), "judge lab attempt: ") || !strings.Contains(string(b), `"ok": false`) && !strings.Contains(string(b), `"ok":false`) {
		t.Errorf("the judge reached the lab, or said nothing of it:\n%s", b)
	}
}

// TestSupportReviewSurvivesKill9: the supervisor killed with SIGKILL while
// the judge runs leaves the request queued; resume judges it once, in a
// new folder (the killed attempt's, which its judge could write, is set
// aside as support-review-ID-1.interrupted-1, never reused).
func TestSupportReviewSurvivesKill9(t *testing.T) {
	t.Parallel()
	dir, args := cheaterStudy(t, "wait")
	sup := start(t, args...)
	var started []string
	waitFor(t, 2*time.Minute, "the judge to start", func() bool {
		started, _ = filepath.Glob(filepath.Join(dir, "supervisor", "support-review-*-1", "work", "started"))
		return len(started) == 1 || sup.exitedYet()
	})
	if sup.exitedYet() {
		t.Fatalf("the study ended before its judge ran: %s", sup.result())
	}
	if err := sup.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sup.result()
	writeFile(t, filepath.Join(filepath.Dir(started[0]), "release"), "") // the orphaned judge may go
	if r := sj(t, "", "resume", "--campaign", dir, "--batch"); r.code != 0 {
		t.Fatalf("resume: %s", r)
	}
	snap := readLedger(t, bin, dir, nil)
	support := 0
	for _, r := range snap.Reviews {
		if r.Stage == "support" {
			support++
			if r.Status != "resolved" || r.Verdict == nil || r.Verdict.Decision != "sufficient" {
				t.Errorf("support review %+v", r)
			}
		}
	}
	if snap.Status != "completed" || support != 1 {
		t.Fatalf("status %s with %d support reviews; ledger %s", snap.Status, support, snap.ledger())
	}
	if aside, _ := filepath.Glob(filepath.Join(dir, "supervisor", "support-review-*-1.interrupted-1", "work", "release")); len(aside) != 1 {
		t.Errorf("the killed attempt's folder was not set aside: %v", aside)
	}
}
