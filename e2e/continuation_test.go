package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hashFiles is the sha256 of every file under dir (symlinks by their target
// name), by path relative to dir.
func hashFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		var b []byte
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			b = []byte("symlink " + target)
			if err != nil {
				return err
			}
		} else if b, err = os.ReadFile(p); err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// continueArgs are the flags of a continuation of parent into child with
// the instructions of c (its hypothesis is the parent's).
func continueArgs(c campaign, parent string, inherit ...string) []string {
	a := []string{"study", "--campaign", c.dir, "--continue-from", parent, "--instructions-file", c.instructions,
		"--backend", "command", "--executable", agent, "--execution-backend", "bubblewrap",
		"--wall-seconds", "60", "--turn-seconds", "30", "--batch"}
	for _, rel := range inherit {
		a = append(a, "--inherit-file", rel)
	}
	return a
}

// TestStudyContinuation runs a study out of budget, refuses bad inherited
// files, continues it into a child that completes and into one that pauses
// with its root open, checks that the parent never changed, and that an
// edited snapshot file makes the child refuse to open, naming the file.
func TestStudyContinuation(t *testing.T) {
	t.Parallel()
	parent := newCampaign(t, "busy", "e2e-seconds: 60")
	reapMarker(t, parent.marker)
	if r := sj(t, "", parent.args(2, 2)...); r.code != 124 {
		t.Fatalf("parent out of budget: want exit 124, got %s", r)
	}
	research := filepath.Join(parent.dir, "research")
	writeFile(t, filepath.Join(research, "notes.md"), "# what the parent learnt\n")
	if err := os.MkdirAll(filepath.Join(research, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(research, "sub", "data.csv"), "n,sum\n3,36\n")
	writeFile(t, filepath.Join(research, ".secret"), "hidden\n")
	writeFile(t, filepath.Join(research, "big.bin"), strings.Repeat("x", 2<<20))
	writeFile(t, filepath.Join(parent.dir, "outside.txt"), "not research\n")
	if err := os.Symlink(filepath.Join(research, "notes.md"), filepath.Join(research, "link.md")); err != nil {
		t.Fatal(err)
	}
	before := hashFiles(t, parent.dir)

	refused := newCampaign(t, "cubes")
	for _, rel := range []string{"link.md", "../outside.txt", ".secret", "big.bin"} {
		r := sj(t, "", continueArgs(refused, parent.dir, "notes.md", rel)...)
		if r.code != 2 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, "--inherit-file") {
			t.Errorf("inheriting %s: want exit 2 and one line naming --inherit-file, got %s", rel, r)
		}
		if _, err := os.Stat(refused.dir); !os.IsNotExist(err) {
			t.Errorf("inheriting %s was refused but wrote %s (%v)", rel, refused.dir, err)
		}
	}

	done := newCampaign(t, "cubes")
	if r := sj(t, "", continueArgs(done, parent.dir, "notes.md", "sub/data.csv")...); r.code != 0 {
		t.Fatalf("continuation: want exit 0, got %s", r)
	}
	if s := status(t, done.dir); s.Status != "completed" {
		t.Errorf("continuation with the cubes agent is %q, want completed", s.Status)
	}
	for _, rel := range []string{"research/inherited/sub/data.csv", "operator/continuation/files/notes.md", "operator/continuation/summary.json"} {
		if _, err := os.Stat(filepath.Join(done.dir, rel)); err != nil {
			t.Errorf("the child lacks %s: %v", rel, err)
		}
	}

	paused := newCampaign(t, "selfpause")
	if r := sj(t, "", continueArgs(paused, parent.dir, "notes.md")...); r.code != 0 {
		t.Fatalf("continuation that pauses: want exit 0, got %s", r)
	}
	if root, ok := status(t, paused.dir).claim("root"); !ok || root.Status != "open" {
		t.Errorf("the child's root is %+v, want open", root)
	}
	if after := hashFiles(t, parent.dir); !equalMaps(before, after) {
		t.Errorf("the parent changed:\nbefore %v\nafter  %v", before, after)
	}

	frozen := filepath.Join(paused.dir, "operator", "continuation", "files", "notes.md")
	if err := os.Chmod(frozen, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, frozen, "# rewritten\n")
	for _, cmd := range [][]string{{"status", "--campaign", paused.dir}, {"resume", "--campaign", paused.dir, "--batch"}} {
		r := sj(t, "", cmd...)
		if r.code != 2 || !strings.Contains(r.stderr, "operator/continuation/files/notes.md") {
			t.Errorf("%s of a child with an edited snapshot: want exit 2 naming the file, got %s", cmd[0], r)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
