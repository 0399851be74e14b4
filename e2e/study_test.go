package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoCompletes runs the bundled demo and checks its record, then that
// verify notices a changed artifact byte and accepts it once restored.
func TestDemoCompletes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	if r := sj(t, "", "demo", dir, "--batch"); r.code != 0 {
		t.Fatalf("demo --batch: want exit 0, got %s", r)
	}
	snap := status(t, dir)
	if snap.Status != "completed" {
		t.Errorf("demo status = %q, want completed", snap.Status)
	}
	if root, ok := snap.claim("root"); !ok || root.Status != "falsified" {
		t.Errorf("root claim = %+v (found %v), want falsified", root, ok)
	}
	if !hasSupportedRepair(snap) {
		t.Errorf("no child of root is supported; claims: %+v", snap.Claims)
	}
	checkReceipts(t, snap, "succeeded")
	for _, f := range []string{"report.json", "LEDGER.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("demo left no %s: %v", f, err)
		}
	}
	checkVerifyCatchesTamper(t, dir, snap)
}

func hasSupportedRepair(snap snapshot) bool {
	for _, c := range snap.Claims {
		if c.Parent != nil && *c.Parent == "root" && c.Status == "supported" {
			return true
		}
	}
	return false
}

// checkReceipts wants at least one receipt, each isolated by bubblewrap
// and in the given status.
func checkReceipts(t *testing.T, snap snapshot, want string) {
	t.Helper()
	if len(snap.Experiments) == 0 {
		t.Fatal("the study recorded no experiment")
	}
	for _, e := range snap.Experiments {
		if e.IsolationBackend != "bubblewrap" || e.Status != want {
			t.Errorf("receipt %s: isolation_backend %q, status %q; want bubblewrap, %s", e.ID, e.IsolationBackend, e.Status, want)
		}
	}
}

// checkVerifyCatchesTamper flips one byte of one artifact: verify must
// exit 1 naming the file, and exit 0 again once the byte is restored.
func checkVerifyCatchesTamper(t *testing.T, dir string, snap snapshot) {
	t.Helper()
	if r := sj(t, "", "verify", "--campaign", dir); r.code != 0 {
		t.Fatalf("verify of an untouched study: want exit 0, got %s", r)
	}
	e, name := firstArtifact(t, snap)
	path := filepath.Join(e.ArtifactDir, name)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("artifact %s of %s: %v", name, e.ID, err)
	}
	changed := append([]byte(nil), orig...)
	changed[len(changed)/2] ^= 0x20
	writeBytes(t, path, changed)
	r := sj(t, "", "verify", "--campaign", dir)
	if r.code != 1 {
		t.Errorf("verify after changing a byte of %s: want exit 1, got %s", path, r)
	}
	out := r.stdout + r.stderr
	if !strings.Contains(out, path) && !(strings.Contains(out, e.ID) && strings.Contains(out, name)) {
		t.Errorf("verify's findings do not name the changed file %s:\n%s", path, out)
	}
	writeBytes(t, path, orig)
	if r := sj(t, "", "verify", "--campaign", dir); r.code != 0 {
		t.Errorf("verify after restoring %s: want exit 0, got %s", path, r)
	}
}

func firstArtifact(t *testing.T, snap snapshot) (receipt, string) {
	t.Helper()
	for _, e := range snap.Experiments {
		for name := range e.Artifacts {
			return e, name
		}
	}
	t.Fatal("no receipt lists an artifact")
	return receipt{}, ""
}

func writeBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// The artifact may be read-only; write it the way a careless user would.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, info.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// TestCommandAgentCompletesStudy runs a whole study with an external
// command agent: it writes a program that checks the sum-of-cubes identity,
// runs it and a larger challenge through `lab run`, and asks for review;
// the reviewer re-hashes the artifacts and approves only if the numbers
// hold.
func TestCommandAgentCompletesStudy(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "cubes", "e2e-n: 300", "e2e-challenge-n: 30000")
	if r := sj(t, "", c.args(120, 30)...); r.code != 0 {
		t.Fatalf("study --batch: want exit 0, got %s", r)
	}
	snap := status(t, c.dir)
	if snap.Status != "completed" {
		t.Errorf("status = %q, want completed%s", snap.Status, snap.notes())
	}
	if root, _ := snap.claim("root"); root.Status != "supported" {
		t.Errorf("root claim status = %q, want supported", root.Status)
	}
	checkReceipts(t, snap, "succeeded")
	checkCubeArtifacts(t, snap)
	checkApprovedReview(t, snap)
	checkSupervisorFiles(t, c.dir)
	if r := sj(t, "", "verify", "--campaign", c.dir); r.code != 0 {
		t.Errorf("verify: want exit 0, got %s", r)
	}
}

// checkCubeArtifacts re-reads the collected result files: the agent's
// program must have run to the n it asked for.
func checkCubeArtifacts(t *testing.T, snap snapshot) {
	t.Helper()
	seen := map[int]bool{}
	for _, e := range snap.Experiments {
		for name := range e.Artifacts {
			var res struct {
				N     int  `json:"n"`
				Holds bool `json:"holds"`
			}
			b, err := os.ReadFile(filepath.Join(e.ArtifactDir, name))
			if err != nil || json.Unmarshal(b, &res) != nil {
				t.Errorf("artifact %s of %s is not readable JSON: %v %s", name, e.ID, err, b)
				continue
			}
			if !res.Holds {
				t.Errorf("artifact %s of %s says the identity fails: %s", name, e.ID, b)
			}
			seen[res.N] = true
		}
	}
	if !seen[300] || !seen[30000] {
		t.Errorf("collected results cover n = %v, want 300 and 30000", seen)
	}
}

func checkApprovedReview(t *testing.T, snap snapshot) {
	t.Helper()
	for _, rv := range snap.Reviews {
		if rv.Claim == "root" && rv.Status == "resolved" && rv.Verdict != nil && rv.Verdict.Decision == "approved" {
			return
		}
	}
	t.Errorf("no resolved, approved review of root; reviews: %+v", snap.Reviews)
}

// checkSupervisorFiles wants the worker turns' and the reviewer's records
// under DIR/supervisor, and the reviewer to have run outside research/.
func checkSupervisorFiles(t *testing.T, dir string) {
	t.Helper()
	turns, _ := filepath.Glob(filepath.Join(dir, "supervisor", "turn-*", "prompt.txt"))
	if len(turns) < 2 {
		t.Errorf("want the prompts of at least 2 worker turns under supervisor/, found %v", turns)
	}
	notes, _ := filepath.Glob(filepath.Join(dir, "supervisor", "review-*", "*", "review-notes.txt"))
	logs, _ := filepath.Glob(filepath.Join(dir, "supervisor", "review-*", "stdout.log"))
	if len(notes) == 0 {
		t.Errorf("the reviewer's review-notes.txt is not under supervisor/review-*/")
	}
	for _, log := range logs {
		b, _ := os.ReadFile(log)
		if ls := lines(string(b)); len(ls) == 0 || !strings.Contains(ls[len(ls)-1], `"approved"`) {
			t.Errorf("reviewer log %s does not end with the approving verdict:\n%s", log, b)
		}
	}
	if len(logs) == 0 {
		t.Errorf("no reviewer stdout.log under supervisor/review-*/")
	}
	if _, err := os.Stat(filepath.Join(dir, "research", "review-notes.txt")); err == nil {
		t.Errorf("the reviewer ran in research/, want a fresh folder")
	}
}

// TestKill9DuringExperimentThenResume kills the supervisor with SIGKILL
// while an experiment runs: the experiment's processes must die with it,
// readers must see the study interrupted, and resume must finish the study
// with every earlier receipt kept.
func TestKill9DuringExperimentThenResume(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "kill", "e2e-seconds: 60")
	reapMarker(t, c.marker)
	sup := start(t, c.args(300, 120)...)
	first := waitRunning(t, c, sup, "")
	if err := sup.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	sup.wait(t, 5*time.Second)
	killed := time.Now()
	waitGone(t, c.marker, 5*time.Second, "after the supervisor was killed with SIGKILL")
	t.Logf("experiment processes gone %v after SIGKILL of the supervisor", time.Since(killed).Round(time.Millisecond))
	if s := status(t, c.dir); s.Status != "interrupted" {
		t.Errorf("status after SIGKILL = %q, want interrupted", s.Status)
	}

	if r := sj(t, "", "resume", "--campaign", c.dir, "--batch"); r.code != 0 {
		t.Fatalf("resume --batch: want exit 0, got %s", r)
	}
	snap := status(t, c.dir)
	if snap.Status != "completed" {
		t.Errorf("status after resume = %q, want completed%s", snap.Status, snap.notes())
	}
	if e, ok := snap.experiment(first.ID); !ok || e.Status != "interrupted" {
		t.Errorf("the killed experiment %s: found %v, status %q; want it kept as interrupted", first.ID, ok, e.Status)
	}
	var retried bool
	for _, e := range snap.Experiments {
		retried = retried || (e.Key == "retry-1" && e.Status == "succeeded")
		if e.IsolationBackend != "bubblewrap" {
			t.Errorf("receipt %s isolation_backend = %q, want bubblewrap", e.ID, e.IsolationBackend)
		}
	}
	if !retried || len(snap.Experiments) != 2 {
		t.Errorf("want the interrupted receipt and a succeeded retry-1 replicate, got %+v", snap.Experiments)
	}
	if r := sj(t, "", "verify", "--campaign", c.dir); r.code != 0 {
		t.Errorf("verify: want exit 0, got %s", r)
	}
}

// waitRunning waits until status shows an experiment (other than skip)
// running and the experiment's own program (python3 sleep.py, carrying
// the campaign's marker) runs, not only its sandbox launcher.
func waitRunning(t *testing.T, c campaign, sup *bg, skip string) receipt {
	t.Helper()
	var running receipt
	waitFor(t, 20*time.Second, "an experiment running with a live process", func() bool {
		if sup.exitedYet() {
			t.Fatalf("the supervisor exited early:\n%s", sup.result())
		}
		snap, err := tryStatus(t, c.dir)
		if err != nil {
			return false
		}
		for _, e := range snap.withStatus("running") {
			if e.ID != skip && len(sleepers(c.marker)) > 0 {
				running = e
				return true
			}
		}
		return false
	})
	return running
}

// waitGone waits until no process carries marker.
func waitGone(t *testing.T, marker string, timeout time.Duration, when string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := procsWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v %s, experiment processes still run:%s", timeout, when, describe(left))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// sleepers lists the python processes of sleep.py experiments carrying
// marker.
func sleepers(marker string) []int {
	var out []int
	for _, pid := range procsWith(marker) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		argv := strings.Split(string(cmdline), "\x00")
		if len(argv) > 1 && strings.Contains(filepath.Base(argv[0]), "python") && strings.HasSuffix(argv[1], "sleep.py") {
			out = append(out, pid)
		}
	}
	return out
}
