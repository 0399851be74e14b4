package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rewriteEvent is run by python3 on the store: it rewrites the payload of an
// early event the way someone editing the record by hand would, dropping
// the append-only triggers first.
const rewriteEvent = `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (name,) in db.execute("select name from sqlite_master where type='trigger' and tbl_name='events'").fetchall():
    db.execute('drop trigger "%s"' % name)
n = db.execute("update events set payload = replace(payload, 'running', 'paused') where seq = (select min(seq) from events where payload like '%running%')").rowcount
db.commit()
sys.exit(0 if n == 1 else "no event mentions running")
`

// TestVerifyDetects tampers with a finished demo study in ways verify must
// notice (exit 1, naming what changed), and moves a study, which verify
// must accept, still checking the moved files.
func TestVerifyDetects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tamper func(t *testing.T, dir string, snap snapshot) (want string)
	}{
		{"artifact deleted", func(t *testing.T, dir string, snap snapshot) string {
			e, name := firstArtifact(t, snap)
			if err := os.Remove(filepath.Join(e.ArtifactDir, name)); err != nil {
				t.Fatal(err)
			}
			return name
		}},
		{"event rewritten in the store", func(t *testing.T, dir string, snap snapshot) string {
			cmd := exec.Command("python3", "-c", rewriteEvent, filepath.Join(dir, "simjecture.db"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("rewriting an event of the store with python3's sqlite3: %v\n%s", err, out)
			}
			return "event"
		}},
		{"stdout.log edited", editStdoutLog},
		{"newest events and report.json deleted", pyTamper(dropNewest, "report.json: missing")},
		{"root made supported with a forged, chained record event", pyTamper(forgeRoot, "claim root is supported")},
		{"database page corrupted", pyTamper(corruptPage, "store: SQLite")},
		{"frozen contract changed", pyTamper(changeContract, "frozen contract")},
		{"verdicts reversed in report.json", reverseVerdicts("report.json")},
		{"verdicts reversed in LEDGER.md", reverseVerdicts("LEDGER.md")},
		{"note forged in the store", pyTamper(forgeNote, ": not in the event log (added outside the harness)")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "demo")
			if r := sj(t, "", "demo", dir, "--batch"); r.code != 0 {
				t.Fatalf("demo --batch: want exit 0, got %s", r)
			}
			if r := sj(t, "", "verify", "--campaign", dir); r.code != 0 {
				t.Fatalf("verify of the untouched demo: want exit 0, got %s", r)
			}
			want := tt.tamper(t, dir, status(t, dir))
			r := sj(t, "", "verify", "--campaign", dir)
			t.Logf("verify after %s: exit %d\n%s", tt.name, r.code, r.stdout)
			if r.code != 1 || !strings.Contains(r.stdout+r.stderr, want) {
				t.Errorf("verify after %s: want exit 1 with findings naming %q, got %s", tt.name, want, r)
			}
		})
	}
	t.Run("moved campaign", func(t *testing.T) {
		t.Parallel()
		testMovedCampaign(t)
	})
}

// testMovedCampaign moves a finished study to another folder: its receipts
// must point into the new folder (contract section 5: artifacts are in
// DIR/experiments/ID), verify must pass there, and must still catch a
// changed artifact in the moved copy.
func testMovedCampaign(t *testing.T) {
	tmp := t.TempDir()
	old, moved := filepath.Join(tmp, "demo"), filepath.Join(tmp, "archive", "demo")
	if r := sj(t, "", "demo", old, "--batch"); r.code != 0 {
		t.Fatalf("demo --batch: want exit 0, got %s", r)
	}
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}
	snap := status(t, moved)
	for _, e := range snap.Experiments {
		if want := filepath.Join(moved, "experiments", e.ID); e.ArtifactDir != want {
			t.Errorf("after moving the campaign, receipt %s has artifact_dir %s, want %s", e.ID, e.ArtifactDir, want)
		}
	}
	if r := sj(t, "", "verify", "--campaign", moved); r.code != 0 {
		t.Errorf("verify of a moved, untouched campaign: want exit 0, got %s", r)
	}
	// Put a pristine copy back at the old place: verify of the moved study
	// must check the moved files, not these.
	if err := os.CopyFS(old, os.DirFS(moved)); err != nil {
		t.Fatal(err)
	}
	e, name := firstArtifact(t, snap)
	path := filepath.Join(moved, "experiments", e.ID, name)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	orig[0] ^= 0x20
	writeBytes(t, path, orig)
	if r := sj(t, "", "verify", "--campaign", moved); r.code != 1 || !strings.Contains(r.stdout+r.stderr, name) {
		t.Errorf("verify of a moved campaign whose artifact %s changed: want exit 1 naming it, got %s", path, r)
	}
}

// TestReceiptShape checks the receipts of a finished demo against contract
// section 6: every field present, the lists as JSON arrays (a reader
// iterates over them), and the figures of a finished run known.
func TestReceiptShape(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	if r := sj(t, "", "demo", dir, "--batch"); r.code != 0 {
		t.Fatalf("demo --batch: want exit 0, got %s", r)
	}
	r := sj(t, "", "status", "--campaign", dir, "--json")
	var snap struct {
		Experiments []map[string]any `json:"experiments"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil || len(snap.Experiments) == 0 {
		t.Fatalf("status --json has no receipts (%v): %s", err, r)
	}
	fields := []string{"id", "status", "isolation_backend", "machine", "source", "args", "stage", "inputs", "outputs",
		"artifacts", "missing_outputs", "rejected_outputs", "input_mutations", "returncode", "signal", "timed_out",
		"limit_exceeded", "wall_seconds", "peak_rss_bytes", "stdout_tail", "stderr_tail", "artifact_dir",
		"created_at", "started_at", "finished_at"}
	arrays := []string{"args", "outputs", "missing_outputs", "rejected_outputs", "input_mutations"}
	known := []string{"returncode", "wall_seconds", "started_at", "finished_at"}
	for _, e := range snap.Experiments {
		for _, f := range fields {
			if _, ok := e[f]; !ok {
				t.Errorf("receipt %v has no %q", e["id"], f)
			}
		}
		for _, f := range arrays {
			if _, ok := e[f].([]any); !ok {
				t.Errorf("receipt %v: %q is %s, want a JSON array", e["id"], f, mustJSON(e[f]))
			}
		}
		for _, f := range known {
			if e[f] == nil {
				t.Errorf("receipt %v of a finished run: %q is null", e["id"], f)
			}
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
