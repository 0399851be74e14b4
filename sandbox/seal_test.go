package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSealOneOpensTheCheckedFile checks that a sealed file's host path is
// opened once, without following a symlink or blocking on a FIFO: what is
// not a regular file is refused, and a symlink to a file with the recorded
// content is refused too rather than followed.
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
			got, err := sealOne(SealedFile{Rel: "in.txt", HostPath: c.host, SHA256: sum}, work)
			switch {
			case c.want == nil && err != nil:
				t.Fatal(err)
			case c.want == nil:
				if b, err := os.ReadFile(got.path); err != nil || string(b) != "sealed bytes" || got.perm != 0o444 {
					t.Fatalf("copy %q %v perm %v", b, err, got.perm)
				}
			case !errors.Is(err, c.want):
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}
