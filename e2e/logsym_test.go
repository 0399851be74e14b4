package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRetryLogsCannotBeAimedAtTheRecord is the audit's record forgery,
// played by an enclosed Codex and Claude Code worker (testdata/linker.py):
// in turn 2 it plants, in its own writable turn folder, the log folder a
// retry in a new session used to take (a link to an experiment's folder,
// or a folder of links to simjecture.db, report.json and LEDGER.md), and
// fails as the CLI does for a session it has no record of. The retry logs
// into a new folder beside the turn's: the record the agent hashed before
// its plant and again from the retry is byte for byte the same, every
// experiment file is as collected, verify passes after the study pauses,
// and the retry's own output is in its sibling folder.
func TestRetryLogsCannotBeAimedAtTheRecord(t *testing.T) {
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here, so agents are not enclosed:\n%s", r)
	}
	for _, cli := range []struct{ name, sub string }{{"codex", "new-thread"}, {"claude", "new-session"}} {
		for _, plan := range []string{"dir", "files"} {
			t.Run(cli.name+"/"+plan, func(t *testing.T) {
				dir, here := linkerStudy(t, cli.name, plan)
				checkRecordUntouched(t, dir, here, false)
				fresh := filepath.Join(dir, "supervisor", "turn-00002-"+cli.sub)
				for name, want := range map[string]string{"stdout.log": "FORGED", "stderr.log": `"completed"`, "prompt.txt": "new session"} {
					checkOwnLog(t, filepath.Join(fresh, name), want)
				}
			})
		}
	}
}

// TestReviewRetryCannotBeAimedAtTheRecord: an enclosed reviewer
// (testdata/linker.py as a command agent) replaces the files of its own review folder
// with links to simjecture.db, LEDGER.md, report.json and an experiment's
// stdout.log, and fails as an agent whose key was refused: the study
// stops for the operator and the same attempt runs again on resume. The
// supervisor moves that folder aside (review-ID-1.interrupted-1) and
// makes the attempt's folder new: the store opens and verify passes, the
// experiment's files are byte for byte as collected, and the links are
// still links, in the folder set aside.
func TestReviewRetryCannotBeAimedAtTheRecord(t *testing.T) {
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here, so agents are not enclosed:\n%s", r)
	}
	s := newFaultStudy(t, "")
	src, err := os.ReadFile(filepath.Join("testdata", "linker.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.exe, src, 0o755); err != nil { // fault_agent.py: a command agent
		t.Fatal(err)
	}
	if r := sj(t, "", s.args(90)...); r.code != 1 || status(t, s.dir).Status != "paused_external_error" {
		t.Fatalf("study: want exit 1, stopped for the operator by the reviewer's 401, got %s", r)
	}
	if r := sj(t, "", s.resume()...); r.code != 0 {
		t.Fatalf("resume: want exit 0 (the worker pauses), got %s", r)
	}
	checkRecordUntouched(t, s.dir, filepath.Dir(s.exe), true)
	aside, err := filepath.Glob(filepath.Join(s.dir, "supervisor", "review-*-1.interrupted-1"))
	if err != nil || len(aside) != 1 {
		t.Fatalf("the interrupted attempt's folder set aside: %v, %v", aside, err)
	}
	if st, err := os.Lstat(filepath.Join(aside[0], "packet.json")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the reviewer's link in the folder set aside: %v, %v", st, err)
	}
	checkOwnLog(t, filepath.Join(strings.TrimSuffix(aside[0], ".interrupted-1"), "stdout.log"), "FORGED")
}

// linkerStudy runs a study of the linker as cli until it pauses itself
// and returns the campaign and the folder of the agent's notes.
func linkerStudy(t *testing.T, cli, plan string) (string, string) {
	t.Helper()
	tmp := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "linker.py"))
	if err != nil {
		t.Fatal(err)
	}
	here := filepath.Join(tmp, "agent")
	exe := filepath.Join(here, cli)
	if err := os.Mkdir(here, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, src, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(here, "plan.txt"), plan)
	hyp, ins, dir := filepath.Join(tmp, "h.txt"), filepath.Join(tmp, "i.txt"), filepath.Join(tmp, "study")
	writeFile(t, hyp, "The retry's logs cannot reach the record.\n")
	writeFile(t, ins, "Adversary test.\n")
	r := sj(t, "", "study", "--campaign", dir, "--hypothesis-file", hyp, "--instructions-file", ins,
		"--backend", cli, "--executable", exe, "--execution-backend", "bubblewrap",
		"--wall-seconds", "90", "--turn-seconds", "30", "--batch")
	if r.code != 0 {
		t.Fatalf("study: want exit 0 (the agent pauses it from its retry), got %s", r)
	}
	return dir, here
}

// checkRecordUntouched compares the record the agent hashed before its
// plant with what its retry saw (only the experiment's files when the
// study stopped and resumed between the two, which rewrites the store and
// the reports) and with the experiment's files now.
func checkRecordUntouched(t *testing.T, dir, here string, resumed bool) {
	t.Helper()
	before, after := readHashes(t, filepath.Join(here, "before.json")), readHashes(t, filepath.Join(here, "after.json"))
	for name, sum := range before {
		exp := strings.HasPrefix(name, "experiments/")
		if after[name] != sum && (exp || !resumed) {
			t.Errorf("%s changed between the plant and the retry", name)
		}
		if exp {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if got := sha256.Sum256(b); err != nil || hex.EncodeToString(got[:]) != sum {
				t.Errorf("%s is not as collected (%v): %q", name, err, b)
			}
		}
	}
	if len(before) < 5 {
		t.Errorf("the agent hashed %d files, want the store, both reports and the experiment's files", len(before))
	}
	snap := status(t, dir)
	if snap.Status != "paused" {
		t.Errorf("status %q, want paused", snap.Status)
	}
	if r := sj(t, "", "verify", "--campaign", dir); r.code != 0 {
		t.Errorf("verify: want exit 0 (nothing was written through a link), got %s", r)
	}
	for _, name := range []string{"report.json", "LEDGER.md"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); strings.Contains(string(b), "FORGED") || strings.Contains(string(b), "new session") {
			t.Errorf("%s holds the agent's output", name)
		}
	}
}

func readHashes(t *testing.T, path string) map[string]string {
	t.Helper()
	var m map[string]string
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("the agent left no %s (%v): %s", filepath.Base(path), err, b)
	}
	return m
}

// checkOwnLog wants path to be a regular file (not a link) holding want.
func checkOwnLog(t *testing.T, path, want string) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		t.Errorf("the retry's %s: want a regular file, got %v, %v", filepath.Base(path), st, err)
		return
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), want) {
		t.Errorf("the retry's %s does not hold %q: %q", filepath.Base(path), want, b)
	}
}
