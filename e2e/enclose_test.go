package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandAgentCannotForgeTheRecord: where Bubblewrap works, a command
// agent (testdata/forger.py) runs with the campaign folder read-only but
// for research/: its writes to the store (sqlite UPDATE of the claims
// table), to a collected artifact and to report.json are refused with
// EROFS, its reviewer cannot write the store either, while lab run, status
// and review work from inside; root is never supported and the study never
// completes.
func TestCommandAgentCannotForgeTheRecord(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here:\n%s", r)
	}
	s := newAdversaryStudy(t, "forger.py")
	if r := sj(t, "", s.args(60)...); r.code != 0 {
		t.Fatalf("study: want exit 0 (the forger pauses in turn 2), got %s", r)
	}
	var got map[string]any
	b, err := os.ReadFile(filepath.Join(filepath.Dir(s.exe), "attempts.json"))
	if err != nil || json.Unmarshal(b, &got) != nil {
		t.Fatalf("the forger left no attempts.json (%v): %s", err, b)
	}
	want := map[string]any{"run_ok": true, "status": "succeeded", "db": "EROFS", "artifact": "EROFS",
		"report": "EROFS", "research": "written", "review_ok": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %v, want %v (all: %s)", k, got[k], v, b)
		}
	}
	if rev, _ := os.ReadFile(filepath.Join(filepath.Dir(s.exe), "reviewer_db")); string(rev) != "EROFS" {
		t.Errorf("reviewer's write to the store: got %q, want EROFS", rev)
	}
	raw := sj(t, "", "status", "--json", "--campaign", s.dir)
	var snap struct {
		Status           string `json:"status"`
		RecordProtection string `json:"record_protection"`
		Claims           []struct{ ID, Status string }
	}
	if err := json.Unmarshal([]byte(raw.stdout), &snap); err != nil {
		t.Fatalf("status --json: %v\n%s", err, raw)
	}
	if snap.RecordProtection != "enclosed" || snap.Status == "completed" {
		t.Errorf("want record_protection enclosed and a study not completed, got %q, %q", snap.RecordProtection, snap.Status)
	}
	for _, c := range snap.Claims {
		if c.ID == "root" && c.Status == "supported" {
			t.Errorf("root was forged to supported")
		}
	}
	if r := sj(t, "", "verify", "--campaign", s.dir); r.code != 0 {
		t.Errorf("verify: want exit 0 (nothing was rewritten), got %s", r)
	}
	if rep, _ := os.ReadFile(filepath.Join(s.dir, "report.json")); !strings.Contains(string(rep), `"record_protection": "enclosed"`) {
		t.Errorf("report.json does not say the record was enclosed")
	}
}

// TestWorkerCannotRewriteItsReviewer: an enclosed command worker whose
// experiments refute its claim (testdata/subvert.py) tries to rewrite its
// own program — outside the campaign folder, writable on the host, and the
// program its reviewer runs — so that the reviewer approves anything, in
// place and by a rename over it, then asks for review. Both attempts fail
// (the enclosure binds the study's programs read-only), the program keeps
// its bytes, the honest reviewer's verdict stands, root is never supported
// and verify passes.
func TestWorkerCannotRewriteItsReviewer(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here:\n%s", r)
	}
	s := newAdversaryStudy(t, "subvert.py")
	before, _ := os.ReadFile(s.exe)
	r := sj(t, "", s.args(60)...)
	if r.code != 0 {
		t.Fatalf("study: want exit 0 (the worker pauses once the review has a verdict), got %s", r)
	}
	if after, _ := os.ReadFile(s.exe); string(after) != string(before) {
		t.Fatalf("the worker rewrote its reviewer's program")
	}
	logs, _ := filepath.Glob(filepath.Join(s.dir, "supervisor", "turn-00001", "stderr.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		t.Logf("turn 1 stderr:\n%s", b)
		if strings.Contains(string(b), "rewrote the reviewer") {
			t.Errorf("the worker says it rewrote the reviewer")
		}
	}
	snap := status(t, s.dir)
	for _, c := range snap.Claims {
		if c.ID == "root" && c.Status == "supported" {
			t.Errorf("root is supported: the forged reviewer approved it")
		}
	}
	if r := sj(t, "", "verify", "--campaign", s.dir); r.code != 0 {
		t.Errorf("verify: want exit 0, got %s", r)
	}
}

// newAdversaryStudy is a fault study whose agent is testdata/NAME, copied
// beside it (a program of the study, writable on the host).
func newAdversaryStudy(t *testing.T, name string) faultStudy {
	t.Helper()
	s := newFaultStudy(t, "")
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s.exe = filepath.Join(filepath.Dir(s.exe), name)
	if err := os.WriteFile(s.exe, src, 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWorkerCannotRewriteTheHost: an enclosed root worker
// (testdata/hostwriter.py) keeps its owner's write access to the host's
// files with every capability dropped, so it tries to rewrite what the
// study runs outside its enclosure: the interpreter its own "#!" line
// names (a python3 wrapper in a folder it may write, so also its
// reviewer's), the bwrap the supervisor launches experiments and
// enclosures with ($SIMJECTURE_BWRAP, a copy in such a folder), and a file
// of a host folder outside its home and /tmp; and it tries to move aside
// the campaign folder's parent and its own program's folder (both in /tmp),
// to put copies of its own at the paths the supervisor opens by name.
// Every write, rename and move is refused, each file keeps its bytes,
// while its home stays writable.
func TestWorkerCannotRewriteTheHost(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here:\n%s", r)
	}
	if os.Geteuid() != 0 {
		t.Skip("the host's system folders are writable to the worker only as root")
	}
	s := newAdversaryStudy(t, "hostwriter.py")
	tools := t.TempDir() // host folders the worker may write (under /tmp)
	interp := filepath.Join(tools, "py3")
	writeFile(t, interp, "#!/bin/sh\nexec python3 \"$@\"\n")
	must(t, os.Chmod(interp, 0o755))
	src, err := os.ReadFile(s.exe)
	must(t, err)
	_, body, _ := strings.Cut(string(src), "\n")
	must(t, os.WriteFile(s.exe, []byte("#!"+interp+"\n"+body), 0o755))
	bwrap := filepath.Join(tools, "bwrap")
	hostBwrap, err := exec.LookPath("bwrap")
	must(t, err)
	b, err := os.ReadFile(hostBwrap)
	must(t, err)
	must(t, os.WriteFile(bwrap, b, 0o755))
	system, err := os.MkdirTemp("/var/lib", "simjecture-e2e-") // neither the home nor a temporary folder
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(system) })
	sysFile := filepath.Join(system, "tool")
	writeFile(t, sysFile, "#!/bin/sh\necho honest\n")
	targets, _ := json.Marshal(map[string]any{"interp": interp, "bwrap": bwrap, "system": sysFile,
		"dirs": []string{filepath.Dir(s.dir), filepath.Dir(s.exe)}})
	writeFile(t, filepath.Join(filepath.Dir(s.exe), "targets.json"), string(targets))
	before := map[string][]byte{}
	for _, p := range []string{interp, bwrap, sysFile} {
		before[p], _ = os.ReadFile(p)
	}
	if r := sjWith(t, []string{"SIMJECTURE_BWRAP=" + bwrap}, "", s.args(60)...); r.code != 0 {
		t.Fatalf("study: want exit 0 (the worker pauses in turn 2), got %s", r)
	}
	var got map[string]string
	a, err := os.ReadFile(filepath.Join(filepath.Dir(s.exe), "attempts.json"))
	if err != nil || json.Unmarshal(a, &got) != nil {
		t.Fatalf("the worker left no attempts.json (%v): %s", err, a)
	}
	t.Logf("attempts: %s", a)
	for _, k := range []string{"interp_write", "interp_rename", "bwrap_write", "bwrap_rename", "system_write", "system_rename",
		"dir0_move", "dir1_move"} {
		if got[k] == "written" || got[k] == "" {
			t.Errorf("%s: got %q, want the write refused", k, got[k])
		}
	}
	if got["home"] != "written" {
		t.Errorf("home: got %q, want the worker's home writable", got["home"])
	}
	for p, want := range before {
		if now, _ := os.ReadFile(p); string(now) != string(want) {
			t.Errorf("%s was rewritten by the worker", p)
		}
	}
	if r := sj(t, "", "verify", "--campaign", s.dir); r.code != 0 {
		t.Errorf("verify: want exit 0, got %s", r)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWorkerCannotPlantPythonStartupCode: an enclosed worker writes a
// usercustomize.py into its Python's user site, in the home it keeps
// writable (testdata/sitepoisoner.py): every later start of that Python,
// its reviewer's included, would run it. The supervisor sees the file
// before the next launch and stops the study for the operator, naming it;
// the planted code never runs.
func TestWorkerCannotPlantPythonStartupCode(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here:\n%s", r)
	}
	s := newAdversaryStudy(t, "sitepoisoner.py")
	marker := filepath.Join(t.TempDir(), "planted-code-ran")
	writeFile(t, filepath.Join(filepath.Dir(s.exe), "marker.txt"), marker)
	home := t.TempDir() // not the operator's: its user site gets the planted file
	r := sjWith(t, []string{"HOME=" + home}, "", s.args(60)...)
	if r.code != 1 {
		t.Fatalf("study: want exit 1 (stopped for the operator), got %s", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the code the worker planted ran")
	}
	st := sj(t, "", "status", "--campaign", s.dir, "--json")
	var snap struct {
		Status    string `json:"status"`
		LastError string `json:"last_error"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &snap); err != nil {
		t.Fatalf("status --json: %v\n%s", err, st)
	}
	if snap.Status != "paused_external_error" || !strings.Contains(snap.LastError, "usercustomize.py") || !strings.Contains(snap.LastError, "appeared") {
		t.Errorf("status %q, last error %q; want paused_external_error naming usercustomize.py", snap.Status, snap.LastError)
	}
}

// TestResumeSeesAProgramPlanted: an enclosed worker plants a python3 in a
// folder of PATH before the system's (in /tmp, writable to it) during its
// last turn and pauses the study, so no launch of that supervisor sees it
// (testdata/planter.py; its own "#!/usr/bin/env python3" names python3).
// The next supervisor finds python3 resolving elsewhere than the study's
// record of its programs says and stops for the operator, naming both;
// the planted program never runs. Removing the record accepts what is
// there now: the study goes on.
func TestResumeSeesAProgramPlanted(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here:\n%s", r)
	}
	s := newAdversaryStudy(t, "planter.py")
	onPath, marker := t.TempDir(), filepath.Join(t.TempDir(), "planted-python3-ran")
	writeFile(t, filepath.Join(filepath.Dir(s.exe), "plant.txt"), onPath)
	writeFile(t, filepath.Join(filepath.Dir(s.exe), "marker.txt"), marker)
	env := []string{"PATH=" + onPath + ":" + os.Getenv("PATH")}
	if r := sjWith(t, env, "", s.args(60)...); r.code != 0 {
		t.Fatalf("study: want exit 0 (the worker pauses it), got %s", r)
	}
	if _, err := os.Stat(filepath.Join(onPath, "python3")); err != nil {
		t.Fatalf("the worker planted no python3: %v", err)
	}
	r := sjWith(t, env, "", s.resume()...)
	if r.code != 1 {
		t.Fatalf("resume: want exit 1 (stopped for the operator), got %s", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the planted python3 ran")
	}
	st := sj(t, "", "status", "--campaign", s.dir, "--json")
	var snap struct {
		LastError string `json:"last_error"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &snap); err != nil {
		t.Fatalf("status --json: %v\n%s", err, st)
	}
	for _, want := range []string{"program python3", filepath.Join(onPath, "python3") + " now", "pins.json"} {
		if !strings.Contains(snap.LastError, want) {
			t.Errorf("last error %q does not say %q", snap.LastError, want)
		}
	}
	must(t, os.Remove(filepath.Join(s.dir, "supervisor", "pins.json")))
	if r := sjWith(t, env, "", s.resume()...); r.code != 0 {
		t.Fatalf("resume after the record was removed: want exit 0 (the worker pauses it), got %s", r)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("after the record was removed the study did not go on with the python3 now on PATH: %v", err)
	}
}
