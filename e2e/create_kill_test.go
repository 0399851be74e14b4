package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Creation-kill sweep: a new study is killed after 0, 1, 2, … ms until
// createSettled kills in a row find a complete study (at most
// createSweepMax): the sweep brackets the creation window empirically,
// whatever this host's speed.
const (
	createSweepStep = time.Millisecond
	createSweepMax  = 300 * time.Millisecond
	createSettled   = 4
)

// The documented ways status says a folder holds no study (docs/campaign.md,
// "Creating a study"): nothing was created yet, or a creation was killed
// before the study existed.
var noStudyLines = []string{"holds no simjecture study", "the creation of its study was interrupted"}

// TestKill9DuringCreationLeavesAUsableFolder kills `study` with SIGKILL at
// every millisecond of its creation window. Every kill must leave either a
// study that status reads, resume completes and verify passes, or a folder
// that status, verify and resume call empty or interrupted (exit 2, one
// line) and in which a second `study` creates the study, which verify then
// passes.
func TestKill9DuringCreationLeavesAUsableFolder(t *testing.T) {
	var outcomes = map[string]int{}
	streak := 0
	for delay := time.Duration(0); delay <= createSweepMax && streak < createSettled; delay += createSweepStep {
		what := killCreation(t, delay)
		outcomes[what]++
		if what == "study" {
			streak++
		} else {
			streak = 0
		}
		if t.Failed() {
			t.Fatalf("kill after %v left an unusable folder (%s)", delay, what)
		}
	}
	t.Logf("kills by what they left: %v", outcomes)
	if streak < createSettled {
		t.Errorf("after %v no kill had left %d complete studies in a row: the sweep did not pass the creation window", createSweepMax, createSettled)
	}
}

// killCreation starts a new study, kills it after delay and checks that
// what is left is usable; it returns what the kill left: "none" (no
// folder, or an empty one), "interrupted" or "study".
func killCreation(t *testing.T, delay time.Duration) string {
	t.Helper()
	k := newKillStudy(t)
	sup := startGroup(t, k.args())
	time.Sleep(delay) // the kill's moment is what this test sweeps
	if err := sup.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	sup.wait(t, 5*time.Second)
	waitNoneLeft(t, k.marker, sup.cmd.Process.Pid, killed)
	entries, _ := os.ReadDir(k.dir)
	writeFile(t, filepath.Join(filepath.Dir(k.exe), "stop"), "")
	if _, ok := statusAfterKill(t, k.dir); ok {
		if r := sj(t, "", "resume", "--campaign", k.dir, "--batch"); r.code != 0 {
			t.Errorf("kill after %v left a study (%s); resume: want exit 0, got %s", delay, names(entries), r)
		}
		checkVerify(t, k.dir, delay)
		return "study"
	}
	what := "none"
	for _, cmd := range [][]string{{"verify", "--campaign", k.dir}, {"resume", "--campaign", k.dir, "--batch"}} {
		r := sj(t, "", cmd...)
		if !saysNoStudy(r) {
			t.Errorf("kill after %v left %s; %s: want exit 2 with one line saying no study or an interrupted creation, got %s", delay, names(entries), cmd[0], r)
		}
		if strings.Contains(r.stderr, noStudyLines[1]) {
			what = "interrupted"
		}
	}
	if r := sj(t, "", k.args()...); r.code != 0 {
		t.Errorf("kill after %v left %s; study again: want exit 0, got %s", delay, names(entries), r)
	}
	checkVerify(t, k.dir, delay)
	return what
}

// statusAfterKill reads the snapshot of a study killed before or while
// it was created: ok when a study exists; when none does, status must say
// so in one of the documented lines (exit 2), and anything else fails.
func statusAfterKill(t *testing.T, dir string) (snapshot, bool) {
	t.Helper()
	var snap snapshot
	r := sj(t, "", "status", "--campaign", dir, "--json")
	if r.code == 0 {
		if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil {
			t.Errorf("status --json is not one JSON object: %v\n%s", err, r.stdout)
			return snap, false
		}
		return snap, true
	}
	if !saysNoStudy(r) {
		t.Errorf("status after SIGKILL: want exit 0, or exit 2 with one line saying no study or an interrupted creation; got %s", r)
	}
	return snap, false
}

// saysNoStudy reports whether r is exit 2 with one line of stderr saying
// the folder holds no study or an interrupted creation.
func saysNoStudy(r result) bool {
	line := strings.TrimSpace(r.stderr)
	if r.code != 2 || strings.Contains(line, "\n") {
		return false
	}
	for _, s := range noStudyLines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

func checkVerify(t *testing.T, dir string, delay time.Duration) {
	t.Helper()
	if r := sj(t, "", "verify", "--campaign", dir); r.code != 0 {
		t.Errorf("kill after %v: verify of the study in the end: want exit 0, got %s", delay, r)
	}
}

func names(entries []os.DirEntry) string {
	if len(entries) == 0 {
		return "no folder or an empty one"
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return "[" + strings.Join(out, " ") + "]"
}

// oldHalfCreated makes, with python3's sqlite3 and the store's own
// migrations, the store a creation before the temporary store left when
// killed between making its store and recording the study.
const oldHalfCreated = `
import glob, os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA journal_mode=WAL")
names = sorted(glob.glob(os.path.join(sys.argv[2], "*.sql")))
for n in names:
    db.executescript(open(n).read())
db.execute("PRAGMA user_version = %d" % len(names))
db.commit()
db.close()
`

// TestStudyOverAnOldHalfCreatedFolder: a folder an older binary left when
// killed after making its store and before recording the study (folders,
// operator files, a migrated store with no study row and no event) is an
// interrupted creation to status, verify and resume (exit 2, one line),
// and `study` creates the study in it, which verify then passes.
func TestStudyOverAnOldHalfCreatedFolder(t *testing.T) {
	k := newKillStudy(t)
	for _, d := range []string{"operator", "research", "experiments", "supervisor"} {
		if err := os.MkdirAll(filepath.Join(k.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(k.dir, "operator", "hypothesis.txt"), "an older hypothesis\n")
	writeFile(t, filepath.Join(k.dir, ".simjecture.lock"), "")
	migrations, err := filepath.Abs(filepath.Join("..", "store", "migrations"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("python3", "-c", oldHalfCreated, filepath.Join(k.dir, "simjecture.db"), migrations).CombinedOutput(); err != nil {
		t.Fatalf("python3's sqlite3: %v\n%s", err, out)
	}
	for _, cmd := range [][]string{{"status", "--campaign", k.dir}, {"verify", "--campaign", k.dir}, {"resume", "--campaign", k.dir, "--batch"}} {
		if r := sj(t, "", cmd...); !saysNoStudy(r) || !strings.Contains(r.stderr, noStudyLines[1]) {
			t.Errorf("%s of an old half-created folder: want exit 2 saying the creation was interrupted, got %s", cmd[0], r)
		}
	}
	writeFile(t, filepath.Join(filepath.Dir(k.exe), "stop"), "")
	if r := sj(t, "", k.args()...); r.code != 0 {
		t.Fatalf("study over an old half-created folder: want exit 0, got %s", r)
	}
	if b, _ := os.ReadFile(filepath.Join(k.dir, "operator", "hypothesis.txt")); !strings.Contains(string(b), "killed supervisor") {
		t.Errorf("operator/hypothesis.txt = %q, want the new study's", b)
	}
	checkVerify(t, k.dir, 0)
}
