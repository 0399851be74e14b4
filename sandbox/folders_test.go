package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFolderRemoved runs twice in the same run folder: each run's folder
// is out of the way when Run returns and gone after Settle, even when the
// experiment took the write bits away from a folder inside it.
func TestRunFolderRemoved(t *testing.T) {
	e := experiment{backend: Bubblewrap, command: []string{"sh", "-c", "mkdir -p d/e && touch d/e/f && chmod 0 d/e d && echo out; echo err >&2"}}
	spec := e.spec(t)
	for range 2 {
		res, err := Run(t.Context(), spec)
		if err != nil || res.ReturnCode == nil || *res.ReturnCode != 0 {
			t.Fatalf("run: %v %+v", err, res)
		}
		if _, err := os.Stat(spec.RunDir); !os.IsNotExist(err) {
			t.Fatalf("run folder still there after Run: %v", err)
		}
	}
	Settle()
	left, _ := readDirNames(filepath.Dir(spec.RunDir))
	for _, n := range left {
		if strings.HasPrefix(n, scrapPrefix) || strings.HasPrefix(n, sparePrefix) {
			t.Errorf("%s left after Settle", n)
		}
	}
}

// TestLogKeptWhole checks the logs of a quiet run: moved into the artifact
// folder whole and read-only, with their tails in the result.
func TestLogKeptWhole(t *testing.T) {
	e := experiment{backend: Bubblewrap, command: []string{"sh", "-c", "echo out; echo err >&2"}}
	res, spec, err := e.run(t)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{StdoutLog: "out\n", StderrLog: "err\n"} {
		p := filepath.Join(spec.ArtifactDir, name)
		info, err := os.Lstat(p)
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o444 || nlink(info) != 1 {
			t.Fatalf("%s: %v %v", name, info, err)
		}
		if got := readArtifact(t, spec, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if res.StdoutTail != "out\n" || res.StderrTail != "err\n" {
		t.Errorf("tails %q %q", res.StdoutTail, res.StderrTail)
	}
}

// TestClearScratch removes what a killed host left: run folders (one with
// a folder the experiment made unwritable) and folders waiting for removal.
func TestClearScratch(t *testing.T) {
	parent := t.TempDir()
	for _, d := range []string{"exp-1/work/sub", scrapPrefix + "1-2/work"} {
		must(t, os.MkdirAll(filepath.Join(parent, d), 0o755))
		must(t, os.WriteFile(filepath.Join(parent, d, "f"), []byte("x"), 0o444))
	}
	must(t, os.Chmod(filepath.Join(parent, "exp-1/work/sub"), 0))
	ClearScratch(parent)
	if left, _ := readDirNames(parent); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
	ClearScratch(filepath.Join(parent, "missing")) // no folder: nothing to do
}

// TestSpareRunFolder takes a spare as a run folder, and refuses spares
// that were changed after they were made.
func TestSpareRunFolder(t *testing.T) {
	tamper := map[string]func(lay layout){
		"none":          func(layout) {},
		"file in work":  func(l layout) { must(t, os.WriteFile(filepath.Join(l.work, "x"), nil, 0o644)) },
		"tmp a symlink": func(l layout) { must(t, os.Remove(l.tmp)); must(t, os.Symlink(t.TempDir(), l.tmp)) },
		"log not empty": func(l layout) { must(t, os.WriteFile(l.stdout, []byte("x"), 0o644)) },
		"log linked":    func(l layout) { must(t, os.Link(l.stderr, l.stderr+".2")) },
	}
	for name, change := range tamper {
		t.Run(name, func(t *testing.T) {
			f := &runFolders{spares: map[string][]string{}}
			parent := t.TempDir()
			spare, ok := f.makeSpare(parent)
			if !ok {
				t.Fatal("no spare")
			}
			change(newLayout(spare))
			f.spares[parent] = []string{spare}
			lay := newLayout(filepath.Join(parent, "exp-1"))
			got := f.take(lay)
			if got != (name == "none") {
				t.Fatalf("take = %v", got)
			}
			_, err := os.Stat(lay.run)
			if got != (err == nil) {
				t.Errorf("run folder present = %v after take = %v", err == nil, got)
			}
			if left, _ := readDirNames(parent); len(left) != map[bool]int{true: 1, false: 0}[got] {
				t.Errorf("left in parent: %v", left)
			}
		})
	}
}
