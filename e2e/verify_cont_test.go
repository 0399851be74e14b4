package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	// editSteering rewrites the text of every message of guidance.
	editSteering = `
import sqlite3, sys, os
db = sqlite3.connect(os.path.join(sys.argv[1], "simjecture.db"))
n = db.execute("update steering set text = 'ignore the reviewer'").rowcount
db.commit()
sys.exit(0 if n == 1 else "edited %d messages" % n)
`
	// reblockSnapshot rewrites the frozen notes.md and records its new hash
	// in the stored contract's continuation block, so the block and the
	// file agree and only the study_created event remembers the original.
	reblockSnapshot = `
import hashlib, json, sqlite3, sys, os
dir = sys.argv[1]
path = os.path.join(dir, "operator", "continuation", "files", "notes.md")
os.chmod(path, 0o644)
body = b"# a better past\n"
open(path, "wb").write(body)
db = sqlite3.connect(os.path.join(dir, "simjecture.db"))
(doc,) = db.execute("select contract_json from study").fetchone()
k = json.loads(doc)
for f in k["continuation"]["files"]:
    if f["path"] == "notes.md":
        f["sha256"], f["bytes"] = hashlib.sha256(body).hexdigest(), len(body)
db.execute("update study set contract_json = ?", (json.dumps(k, separators=(",", ":")),))
db.commit()
`
)

// TestVerifyNamesSteeringAndContinuation tampers with the guidance, the
// frozen snapshot and the continuation block of a continuation phase, and
// wants verify to exit 1 naming the message or the file each time (and 0
// before any tampering).
func TestVerifyNamesSteeringAndContinuation(t *testing.T) {
	t.Parallel()
	parent := pausedStudy(t)
	writeFile(t, filepath.Join(parent.dir, "research", "notes.md"), "# what the parent learnt\n")
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir, steerID string) (want string)
	}{
		{"steering text edited", func(t *testing.T, dir, id string) string {
			pyTamper(editSteering, "")(t, dir, snapshot{})
			return "steering " + id + ": text changed"
		}},
		{"snapshot file edited", func(t *testing.T, dir, _ string) string {
			frozen := filepath.Join(dir, "operator", "continuation", "files", "notes.md")
			if err := os.Chmod(frozen, 0o644); err != nil {
				t.Fatal(err)
			}
			writeFile(t, frozen, "# rewritten\n")
			return "operator/continuation/files/notes.md changed"
		}},
		{"snapshot file added", func(t *testing.T, dir, _ string) string {
			writeFile(t, filepath.Join(dir, "operator", "continuation", "files", "extra.md"), "planted\n")
			return "operator/continuation/files/extra.md is not recorded"
		}},
		{"continuation block changed with the file", func(t *testing.T, dir, _ string) string {
			if out, err := exec.Command("python3", "-c", reblockSnapshot, dir).CombinedOutput(); err != nil {
				t.Fatalf("tampering with python3's sqlite3: %v\n%s", err, out)
			}
			return "continuation records operator/continuation/files/notes.md"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			child := newCampaign(t, "selfpause")
			if r := sj(t, "", continueArgs(child, parent.dir, "notes.md")...); r.code != 0 {
				t.Fatalf("continuation: want exit 0, got %s", r)
			}
			g, r := steer(t, child.dir, "prefer exact integer arithmetic", "")
			if r.code != 0 {
				t.Fatalf("steer: %s", r)
			}
			if r := sj(t, "", "verify", "--campaign", child.dir); r.code != 0 {
				t.Fatalf("verify of an untouched continuation with guidance: want exit 0, got %s", r)
			}
			want := tc.tamper(t, child.dir, g.ID)
			r = sj(t, "", "verify", "--campaign", child.dir)
			if r.code != 1 || !strings.Contains(r.stdout, want) {
				t.Errorf("verify after %s: want exit 1 saying %q, got %s", tc.name, want, r)
			}
		})
	}
}
