package machine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
)

// TestDirectoryHashCacheSeesChanges: the cached runtime hash is the full
// hash, and a same-size rewrite, a chmod or a new file gives the new full
// hash at the next call.
func TestDirectoryHashCacheSeesChanges(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bin", "tool")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(body string) {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("version 1\n")
	for _, change := range []struct {
		name string
		do   func()
	}{
		{"unchanged", func() {}},
		{"same-size rewrite", func() { write("version 2\n") }},
		{"chmod", func() { _ = os.Chmod(p, 0o755) }},
		{"new file", func() { _ = os.WriteFile(filepath.Join(dir, "extra"), []byte("x"), 0o644) }},
	} {
		change.do()
		got, err := directoryHash(dir)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sandbox.DirectoryHash(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: cached hash %s, full hash %s", change.name, got, want)
		}
	}
}

// BenchmarkRuntimeHash: a hello's re-check of a 64 MiB runtime in 64
// files, hashed in full against the cached check (one lstat per entry).
func BenchmarkRuntimeHash(b *testing.B) {
	dir := b.TempDir()
	buf := make([]byte, 1<<20)
	for i := range 64 {
		if err := os.WriteFile(filepath.Join(dir, "f"+string(rune('a'+i%26))+string(rune('a'+i/26))), buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			if _, err := sandbox.DirectoryHash(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			if _, err := directoryHash(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
}
