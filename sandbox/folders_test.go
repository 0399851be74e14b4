package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
		if strings.HasPrefix(n, scrapPrefix) || strings.HasPrefix(n, sparePrefix) || strings.HasPrefix(n, recyclePrefix) {
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

// finishedRun makes a folder as a run may leave it: outputs in work/ (one
// folder unwritable), files in tmp/, a log, modes changed.
func finishedRun(t *testing.T, parent string) layout {
	t.Helper()
	lay := newLayout(filepath.Join(parent, recyclePrefix+"run"))
	makeRunDirNow(t, lay)
	must(t, os.MkdirAll(filepath.Join(lay.work, "d", "e"), 0o755))
	must(t, os.WriteFile(filepath.Join(lay.work, "d", "e", "f"), []byte("x"), 0o444))
	must(t, os.Chmod(filepath.Join(lay.work, "d"), 0))
	must(t, os.WriteFile(filepath.Join(lay.tmp, "t"), []byte("y"), 0o600))
	must(t, os.WriteFile(lay.stdout, []byte("out"), 0o644))
	must(t, os.Remove(lay.stderr)) // moved into the artifact folder
	must(t, os.WriteFile(filepath.Join(lay.run, "extra"), nil, 0o644))
	must(t, os.Chmod(lay.tmp, 0o500))
	return lay
}

func makeRunDirNow(t *testing.T, lay layout) {
	t.Helper()
	must(t, os.Mkdir(lay.run, runDirMode))
	must(t, makeRunParts(lay))
	must(t, os.WriteFile(lay.stdout, nil, logMode))
	must(t, os.WriteFile(lay.stderr, nil, logMode))
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	info, err := os.Lstat(p)
	must(t, err)
	return info.Sys().(*syscall.Stat_t).Ino
}

// TestRecycleRunFolder turns a finished run's folder into a spare that take
// accepts, keeping its folders; a folder not as a run leaves it is refused.
func TestRecycleRunFolder(t *testing.T) {
	cases := map[string]struct {
		change func(t *testing.T, l layout)
		ok     bool
	}{
		"as left":         {func(*testing.T, layout) {}, true},
		"work a symlink":  {func(t *testing.T, l layout) { removeTree(l.work); must(t, os.Symlink(t.TempDir(), l.work)) }, false},
		"tmp missing":     {func(t *testing.T, l layout) { removeTree(l.tmp) }, false},
		"run folder mode": {func(t *testing.T, l layout) { must(t, os.Chmod(l.run, 0o755)) }, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			lay := finishedRun(t, parent)
			c.change(t, lay)
			work := inode(t, lay.work)
			f := &runFolders{spares: map[string][]string{}}
			spare, ok := f.recycle(lay.run)
			if ok != c.ok {
				t.Fatalf("recycle = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			got := newLayout(spare)
			if inode(t, got.work) != work {
				t.Error("work/ was made again instead of kept")
			}
			for p, mode := range map[string]os.FileMode{got.run: runDirMode, got.work: runPartMode, got.tmp: runPartMode} {
				if info, err := os.Lstat(p); err != nil || info.Mode().Perm() != mode {
					t.Errorf("%s: %v %v, want mode %o", p, info, err, mode)
				}
			}
			if names, _ := readDirNames(spare); len(names) != 4+sealBlanks {
				t.Errorf("spare holds %v", names)
			}
			f.spares[parent] = []string{spare}
			if !f.take(newLayout(filepath.Join(parent, "exp-2"))) {
				t.Error("take refused the recycled spare")
			}
		})
	}
}

// TestRunFolderRecycled runs twice in one parent: the second run gets the
// first run's folders, emptied.
func TestRunFolderRecycled(t *testing.T) {
	e := experiment{backend: Bubblewrap, command: []string{"sh", "-c", "test -z \"$(ls -A)\" || ls -A >&2; mkdir out; echo x > out/f"}}
	spec := e.spec(t)
	parent := filepath.Dir(spec.RunDir)
	var first uint64
	for i := range 2 {
		res, err := Run(t.Context(), spec)
		if err != nil || res.ReturnCode == nil || *res.ReturnCode != 0 || res.StderrTail != "" {
			t.Fatalf("run %d: %v %+v", i, err, res)
		}
		waitFor(t, "a spare folder", 10*time.Second, func() bool {
			folders.mu.Lock()
			defer folders.mu.Unlock()
			return len(folders.spares[parent]) > 0
		})
		folders.mu.Lock()
		spare := folders.spares[parent][0]
		folders.mu.Unlock()
		if i == 0 {
			first = inode(t, spare)
		} else if inode(t, spare) != first {
			t.Error("the run folder was not recycled")
		}
	}
}
