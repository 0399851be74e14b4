package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWorkspaceLimitHolds runs experiments that pass a 64 MiB workspace
// limit where the sampled watchdog cannot see it — sparse files written
// just before exit, real files under a folder the account cannot list —
// and one that stays under it: a breach is limit_exceeded workspace and
// nothing is copied into the artifact folder.
func TestWorkspaceLimitHolds(t *testing.T) {
	requireRoot(t)
	const files = "f1 f2 f3 f4 f5"
	cases := []struct {
		name    string
		script  string
		outputs []string
		limit   string
		maxWall float64
	}{
		{name: "sparse files just before exit", limit: LimitWorkspace, maxWall: 10,
			script:  "for f in " + files + "; do truncate -s 14M $f; done",
			outputs: strings.Fields(files)},
		{name: "unlistable folder, then exit", limit: LimitWorkspace, maxWall: 10,
			script:  "mkdir d; for f in " + files + "; do head -c 14680064 /dev/zero > d/$f; done; chmod 0300 d",
			outputs: []string{"d/f1", "d/f2"}},
		{name: "unlistable folder, still running", limit: LimitWorkspace, maxWall: 10,
			script:  "mkdir d; for f in " + files + "; do head -c 14680064 /dev/zero > d/$f; done; chmod 0300 d; sleep 30",
			outputs: []string{"d/f1"}},
		{name: "under the limit", limit: "", maxWall: 10,
			script:  "for f in f1 f2 f3 f4; do truncate -s 14M $f; done",
			outputs: []string{"f1", "f2", "f3", "f4"}},
	}
	for _, c := range cases {
		for _, bc := range backendCases {
			if bc.name == "bubblewrap-nobody" {
				continue
			}
			t.Run(c.name+"/"+bc.name, func(t *testing.T) {
				e := experiment{backend: bc.backend, asNobody: bc.asNobody, command: []string{"sh", "-c", c.script},
					outputs: c.outputs, maxFile: 16 << 20, space: 64 << 20}
				res, spec, err := e.run(t)
				if err != nil {
					t.Fatal(err)
				}
				if res.LimitExceeded != c.limit || res.WallSeconds > c.maxWall {
					t.Fatalf("limit=%q wall=%.2f, want %q; stderr=%s", res.LimitExceeded, res.WallSeconds, c.limit, res.StderrTail)
				}
				copied := artifactBytes(t, spec.ArtifactDir)
				if c.limit == "" {
					if len(res.Artifacts) != len(c.outputs) || copied != int64(len(c.outputs))*14<<20 {
						t.Fatalf("under the limit: artifacts %v, %d bytes copied", res.Artifacts, copied)
					}
					return
				}
				var rejected []string
				for _, r := range res.RejectedOutputs {
					if r.Reason == ReasonWorkspace {
						rejected = append(rejected, r.Path)
					}
				}
				if len(res.Artifacts) != 0 || copied != 0 || !slices.Equal(rejected, c.outputs) {
					t.Fatalf("breach: artifacts %v, %d bytes copied, rejected for the workspace %v", res.Artifacts, copied, rejected)
				}
			})
		}
	}
}

// artifactBytes sums the files of the artifact folder other than the logs.
func artifactBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() && info.Name() != StdoutLog && info.Name() != StderrLog {
			n += info.Size()
		}
		return err
	})
	must(t, err)
	return n
}

// TestCollectionBudget checks that collection never copies more than the
// workspace limit in all, even when the last measure missed a breach (an
// output grown by a survivor): outputs are copied in order while they fit,
// the rest are rejected for the workspace.
func TestCollectionBudget(t *testing.T) {
	work := t.TempDir()
	for name, size := range map[string]int{"a": 3 << 20, "b": 3 << 20, "c": 1 << 20} {
		must(t, os.WriteFile(filepath.Join(work, name), make([]byte, size), 0o644))
	}
	cases := []struct {
		name     string
		breached bool
		want     []string // collected
	}{
		{"not breached", false, []string{"a", "c"}},
		{"breached", true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Spec{Outputs: []string{"a", "b", "c"}, ArtifactDir: t.TempDir(), MaxFileBytes: 8 << 20, WorkspaceBytes: 5 << 20}
			var res Result
			must(t, collectOutputs(s, work, c.breached, &res))
			var got []string
			for rel := range res.Artifacts {
				got = append(got, rel)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) || len(res.RejectedOutputs) != 3-len(c.want) || artifactBytes(t, s.ArtifactDir) > s.WorkspaceBytes {
				t.Fatalf("collected %v, rejected %v", got, res.RejectedOutputs)
			}
		})
	}
}

// TestWorkspaceUsage checks what one entry counts: the larger of its
// apparent and allocated size, a hard-linked inode once.
func TestWorkspaceUsage(t *testing.T) {
	cases := []struct {
		name       string
		make       func(dir string)
		min, max   int64
		measurable bool
	}{
		{"sparse file counts its apparent size", func(d string) {
			must(t, os.Truncate(create(t, filepath.Join(d, "s")), 50<<20))
		}, 50 << 20, 51 << 20, true},
		{"preallocated blocks count beyond the size", func(d string) {
			f, err := os.Create(filepath.Join(d, "p"))
			must(t, err)
			defer f.Close()
			must(t, fallocateKeepSize(f, 8<<20))
		}, 8 << 20, 9 << 20, true},
		{"hard links count once", func(d string) {
			p := filepath.Join(d, "h")
			must(t, os.WriteFile(p, make([]byte, 4<<20), 0o644))
			must(t, os.Link(p, filepath.Join(d, "h2")))
			must(t, os.Link(p, filepath.Join(d, "h3")))
		}, 4 << 20, 5 << 20, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			c.make(d)
			n, ok := workspaceUsage([]string{d})
			if ok != c.measurable || n < c.min || n > c.max {
				t.Fatalf("usage %d ok=%v, want %d..%d ok=%v", n, ok, c.min, c.max, c.measurable)
			}
		})
	}
}

func create(t *testing.T, p string) string {
	t.Helper()
	must(t, os.WriteFile(p, nil, 0o644))
	return p
}

func fallocateKeepSize(f *os.File, n int64) error {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, n)
}

// TestWorkspaceMeasure checks the walk through directory handles: the
// sealed copies are left out by inode (a further link adds nothing, a copy
// counts, a big one is not a big file), a tree deeper than PATH_MAX is
// measured, and more entries than the walk may visit cannot be measured.
func TestWorkspaceMeasure(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name     string
		make     func(t *testing.T, dir string) []harnessFile // returns the sealed copies
		cap      int
		min, max int64
		ok, big  bool
	}{
		{"a sealed copy counts nothing", func(t *testing.T, d string) []harnessFile {
			return []harnessFile{sealedFile(t, filepath.Join(d, "in"), 4*mib)}
		}, 0, 0, 64 << 10, true, false},
		{"a link to a sealed copy adds nothing", func(t *testing.T, d string) []harnessFile {
			h := sealedFile(t, filepath.Join(d, "in"), 4*mib)
			must(t, os.Link(filepath.Join(d, "in"), filepath.Join(d, "in2")))
			return []harnessFile{h}
		}, 0, 0, 64 << 10, true, false},
		{"a copy of a sealed copy counts", func(t *testing.T, d string) []harnessFile {
			h := sealedFile(t, filepath.Join(d, "in"), 4*mib)
			must(t, os.WriteFile(filepath.Join(d, "copy"), make([]byte, 4*mib), 0o644))
			return []harnessFile{h}
		}, 0, 4 * mib, 4*mib + 64<<10, true, true},
		{"a tree deeper than PATH_MAX", func(t *testing.T, d string) []harnessFile {
			fd := deepTree(t, d, 2100)
			must(t, os.WriteFile(fmt.Sprintf("/proc/self/fd/%d/f", fd), make([]byte, mib), 0o644))
			_ = unix.Close(fd)
			return nil
		}, 0, mib + 2100*4096, mib + 2200*4096, true, false},
		{"more entries than the walk visits", func(t *testing.T, d string) []harnessFile {
			for i := range 20 {
				create(t, filepath.Join(d, fmt.Sprint(i)))
			}
			return nil
		}, 10, 0, 1 << 20, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			harness := c.make(t, d)
			if c.cap > 0 {
				defer func(n int) { maxWorkspaceEntries = n }(maxWorkspaceEntries)
				maxWorkspaceEntries = c.cap
			}
			u := measureWorkspace([]string{d}, 2*mib, harness)
			if u.ok != c.ok || u.bigFile != c.big || u.total < c.min || u.total > c.max {
				t.Fatalf("total %d ok=%v big=%v, want %d..%d ok=%v big=%v", u.total, u.ok, u.bigFile, c.min, c.max, c.ok, c.big)
			}
		})
	}
}

// sealedFile writes n bytes to p, read-only, and describes it as Run does
// for a sealed copy.
func sealedFile(t *testing.T, p string, n int) harnessFile {
	t.Helper()
	must(t, os.WriteFile(p, make([]byte, n), 0o444))
	h, err := harnessFileOf(p)
	must(t, err)
	return h
}

// deepTree makes depth nested folders "d" under dir through handles and
// returns a handle of the deepest.
func deepTree(t *testing.T, dir string, depth int) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	for range depth {
		must(t, unix.Mkdirat(fd, "d", 0o755))
		sub, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		must(t, err)
		_ = unix.Close(fd)
		fd = sub
	}
	return fd
}

// TestDeletedOpenBytes counts the unlinked files this process holds open:
// one on the watched file system counts once however many descriptors
// refer to it; one still linked elsewhere, and one on another file system
// (a memfd), do not. A tree with more descriptors than a sample reads
// cannot be measured.
func TestDeletedOpenBytes(t *testing.T) {
	d := t.TempDir()
	open := func(name string, n int) *os.File {
		f, err := os.Create(filepath.Join(d, name))
		must(t, err)
		t.Cleanup(func() { _ = f.Close() })
		_, err = f.Write(make([]byte, n))
		must(t, err)
		return f
	}
	gone := open("gone", 3<<20)
	must(t, os.Remove(gone.Name()))
	again, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", gone.Fd()))
	must(t, err)
	defer again.Close()
	linked := open("linked", 2<<20)
	must(t, os.Link(linked.Name(), filepath.Join(d, "other")))
	must(t, os.Remove(linked.Name()))
	mfd, err := unix.MemfdCreate("held", 0)
	must(t, err)
	defer unix.Close(mfd)
	must(t, unix.Ftruncate(mfd, 5<<20))
	st, err := readStat(os.Getpid())
	must(t, err)
	self := map[int]uint64{os.Getpid(): st.start}
	n, ok := deletedOpenBytes(self, watchedDevices([]string{d}), map[fileID]bool{})
	if !ok || n < 3<<20 || n > 3<<20+64<<10 {
		t.Fatalf("held %d ok=%v, want 3 MiB", n, ok)
	}
	defer func(n int) { maxTreeFDs = n }(maxTreeFDs)
	maxTreeFDs = 5 // this process holds more: the files above, the memfd, the standard ones
	if _, ok := deletedOpenBytes(self, watchedDevices([]string{d}), map[fileID]bool{}); ok {
		t.Fatal("more descriptors than a sample reads were measured")
	}
}
