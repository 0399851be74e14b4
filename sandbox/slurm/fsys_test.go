package slurm

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLocalReadFileRefusesWhatAJobCanPlant: the job folder's files are
// written by the job; reading one never blocks on a FIFO, never follows a
// symlink and never reads a file past the bound.
func TestLocalReadFileRefusesWhatAJobCanPlant(t *testing.T) {
	dir := t.TempDir()
	plain, fifo, link, big := filepath.Join(dir, "usage.json"), filepath.Join(dir, "fifo"), filepath.Join(dir, "link"), filepath.Join(dir, "big")
	if err := os.WriteFile(plain, []byte(`{"processes":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxReadFile + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	_ = f.Close()
	if b, err := (LocalFiles{}).ReadFile(plain); err != nil || string(b) != `{"processes":1}` {
		t.Fatalf("a plain file = %q, %v", b, err)
	}
	for _, p := range []string{fifo, link, big} {
		if b, err := (LocalFiles{}).ReadFile(p); err == nil {
			t.Errorf("%s read (%d bytes), want a refusal", filepath.Base(p), len(b))
		}
	}
}
