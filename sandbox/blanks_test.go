package sandbox

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
)

// sealInputs writes n small inputs in a folder of their own and returns
// the spec that seals them.
func sealInputs(t *testing.T, n int) Spec {
	t.Helper()
	dir := t.TempDir()
	var spec Spec
	spec.WorkspaceBytes = 1 << 20
	for i := range n {
		p := filepath.Join(dir, "in"+strconv.Itoa(i))
		must(t, os.WriteFile(p, []byte("input "+strconv.Itoa(i)+"\n"), 0o644))
		sum, _, err := HashFile(p)
		must(t, err)
		spec.Sealed = append(spec.Sealed, SealedFile{Rel: "d/in" + strconv.Itoa(i), HostPath: p, SHA256: sum})
	}
	return spec
}

// A spare run folder's blanks become the sealed copies: the copy is the
// blank's inode, renamed into place, and a run with more inputs than
// blanks makes the rest.
func TestSealUsesTheSparesBlanks(t *testing.T) {
	lay := newLayout(filepath.Join(t.TempDir(), "run"))
	must(t, os.Mkdir(lay.run, runDirMode))
	must(t, makeRunParts(lay))
	must(t, makeBlanks(lay))
	var inodes []uint64
	for i := range sealBlanks {
		inodes = append(inodes, inode(t, lay.blank(i)))
	}
	spec := sealInputs(t, sealBlanks+1)
	sealed, err := sealAll(spec, lay.work, &blanks{lay: lay})
	must(t, err)
	for i, c := range sealed {
		if got := inode(t, c.path); i < sealBlanks && got != inodes[i] {
			t.Errorf("%s: inode %d, want blank %d's %d", c.rel, got, i, inodes[i])
		}
		if _, err := os.Lstat(lay.blank(min(i, sealBlanks-1))); i < sealBlanks && !os.IsNotExist(err) {
			t.Errorf("blank %d still there: %v", i, err)
		}
	}
	if len(sealed) != sealBlanks+1 || mutations(sealed) != nil {
		t.Fatalf("sealed %d, mutations %v", len(sealed), mutations(sealed))
	}
}

// A blank that is not as it was made, or that something else holds open,
// is never used: the sealed copy is a new file with the input's bytes, what
// the blank led to is unchanged, and writing through a handle or a mapping
// of the blank taken beforehand does not reach the copy.
func TestSealRefusesTamperedBlanks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside")
	must(t, os.WriteFile(outside, nil, 0o644))
	cases := []struct {
		name   string
		tamper func(t *testing.T, blank string) (write func())
	}{
		{"symlink to a file outside", func(t *testing.T, blank string) func() {
			must(t, os.Symlink(outside, blank))
			return nil
		}},
		{"hard link to a file outside", func(t *testing.T, blank string) func() {
			must(t, os.Link(outside, blank))
			return nil
		}},
		{"bytes planted", func(t *testing.T, blank string) func() {
			must(t, os.WriteFile(blank, []byte("planted"), 0o600))
			return nil
		}},
		{"a folder", func(t *testing.T, blank string) func() {
			must(t, os.Mkdir(blank, 0o700))
			return nil
		}},
		{"held open for writing", func(t *testing.T, blank string) func() {
			must(t, os.WriteFile(blank, nil, 0o600))
			f, err := os.OpenFile(blank, os.O_WRONLY, 0)
			must(t, err)
			t.Cleanup(func() { f.Close() })
			return func() { _, _ = f.WriteAt([]byte("EVIL!!!\n"), 0) }
		}},
		{"mapped shared", func(t *testing.T, blank string) func() {
			must(t, os.WriteFile(blank, nil, 0o600))
			f, err := os.OpenFile(blank, os.O_RDWR, 0)
			must(t, err)
			defer f.Close()
			m, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
			must(t, err)
			t.Cleanup(func() { _ = syscall.Munmap(m) })
			return func() { // a fault (m past the end of a file still empty) is recovered
				defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
				defer func() { _ = recover() }()
				copy(m, "EVIL")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lay := newLayout(filepath.Join(t.TempDir(), "run"))
			must(t, os.Mkdir(lay.run, runDirMode))
			must(t, makeRunParts(lay))
			write := c.tamper(t, lay.blank(0))
			spec := sealInputs(t, 1)
			sealed, err := sealAll(spec, lay.work, &blanks{lay: lay})
			must(t, err)
			if write != nil {
				write()
			}
			b, _ := os.ReadFile(sealed[0].path)
			info, err := os.Lstat(sealed[0].path)
			if err != nil || !info.Mode().IsRegular() || nlink(info) != 1 || string(b) != "input 0\n" {
				t.Errorf("sealed copy %v %v holds %q", info, err, b)
			}
			if b, err := os.ReadFile(outside); err != nil || len(b) != 0 {
				t.Errorf("%s written through a blank: %q %v", outside, b, err)
			}
		})
	}
}
