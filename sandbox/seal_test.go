package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSealOneOpensTheCheckedFile checks that a sealed file's host path is
// opened once, without following a symlink or blocking on a FIFO: what is
// not a regular file is refused, and a symlink to a file with the recorded
// content is refused too rather than followed.
// TestSealAllRefusesOverTheWorkspace: sealed files that together are larger
// than the workspace limit (a sparse file by its apparent size) are
// refused before anything is copied, with an error naming the file.
func TestSealAllRefusesOverTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small"), filepath.Join(dir, "big")
	must(t, os.WriteFile(small, []byte("12345"), 0o444))
	writeTestFile(t, big, 64<<20, true)
	sums := map[string]string{}
	for _, p := range []string{small, big} {
		sum, _, err := HashFile(p)
		must(t, err)
		sums[p] = sum
	}
	spec := Spec{WorkspaceBytes: 64 << 20, Sealed: []SealedFile{
		{Rel: "a/small.txt", HostPath: small, SHA256: sums[small]}, {Rel: "b/big.bin", HostPath: big, SHA256: sums[big]}}}
	work := t.TempDir()
	_, err := sealAll(spec, work, nil)
	if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "b/big.bin") || !strings.Contains(err.Error(), "67108869 bytes") {
		t.Fatalf("over the workspace: %v", err)
	}
	if names, _ := os.ReadDir(work); len(names) > 0 {
		t.Fatalf("refused, yet %d entries were copied into work/", len(names))
	}
	spec.WorkspaceBytes = 64<<20 + 5
	if _, err := sealAll(spec, t.TempDir(), nil); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestSealOneOpensTheCheckedFile(t *testing.T) {
	dir := t.TempDir()
	blob := filepath.Join(dir, "blob")
	must(t, os.WriteFile(blob, []byte("sealed bytes"), 0o444))
	sum, _, err := HashFile(blob)
	must(t, err)
	link := filepath.Join(dir, "link")
	must(t, os.Symlink(blob, link))
	fifo := filepath.Join(dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o644))
	cases := []struct {
		name, host string
		want       error // nil: sealed
	}{
		{"regular", blob, nil},
		{"symlink", link, syscall.ELOOP},
		{"fifo", fifo, ErrInvalidSpec},
		{"folder", dir, ErrInvalidSpec},
		{"missing", filepath.Join(dir, "nope"), os.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			all, err := sealAll(Spec{Sealed: []SealedFile{{Rel: "in.txt", HostPath: c.host, SHA256: sum}}, WorkspaceBytes: 1 << 20}, work, nil)
			switch {
			case c.want == nil && err != nil:
				t.Fatal(err)
			case c.want == nil:
				got := all[0]
				if b, err := os.ReadFile(got.path); err != nil || string(b) != "sealed bytes" || got.perm != 0o444 {
					t.Fatalf("copy %q %v perm %v", b, err, got.perm)
				}
			case !errors.Is(err, c.want):
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}
