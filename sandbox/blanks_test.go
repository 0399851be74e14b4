package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
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

// A blank that is not as it was made (a symlink to a file outside, a hard
// link to one, a file with bytes in it, a folder) is never written through:
// the sealed copy is a new file with the input's bytes, and what the blank
// led to is unchanged.
func TestSealRefusesTamperedBlanks(t *testing.T) {
	lay := newLayout(filepath.Join(t.TempDir(), "run"))
	must(t, os.Mkdir(lay.run, runDirMode))
	must(t, makeRunParts(lay))
	outside := filepath.Join(t.TempDir(), "outside")
	must(t, os.WriteFile(outside, nil, 0o644))
	linked := filepath.Join(t.TempDir(), "linked")
	must(t, os.WriteFile(linked, nil, 0o644))
	must(t, os.Symlink(outside, lay.blank(0)))
	must(t, os.Link(linked, lay.blank(1)))
	must(t, os.WriteFile(lay.blank(2), []byte("planted"), 0o600))
	must(t, os.Mkdir(lay.blank(3), 0o700))
	spec := sealInputs(t, sealBlanks)
	sealed, err := sealAll(spec, lay.work, &blanks{lay: lay})
	must(t, err)
	for i, c := range sealed {
		info, err := os.Lstat(c.path)
		if err != nil || !info.Mode().IsRegular() || nlink(info) != 1 {
			t.Errorf("%s: %v %v", c.rel, info, err)
		}
		b, _ := os.ReadFile(c.path)
		if string(b) != "input "+strconv.Itoa(i)+"\n" {
			t.Errorf("%s holds %q", c.rel, b)
		}
	}
	for _, p := range []string{outside, linked} {
		if b, err := os.ReadFile(p); err != nil || len(b) != 0 {
			t.Errorf("%s written through a blank: %q %v", p, b, err)
		}
	}
}
