package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCopyAndHash checks both sealing paths (small: copy then hash; large:
// overlapped) against HashFile of the source, and the copy's content and mode.
func TestCopyAndHash(t *testing.T) {
	for _, size := range []int{0, 1, 4 << 10, smallMax, smallMax + 1, overlapMin + overlapChunk + 12345} {
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*31 + i/7)
		}
		if err := os.WriteFile(src, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want, _, err := HashFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, "a", "b", "dst")
		got, n, err := copyAndHash(src, dst, 0o444)
		if err != nil || got != want || n != int64(size) {
			t.Fatalf("size %d: got %s %d %v, want %s", size, got, n, err, want)
		}
		info, err := os.Stat(dst)
		if err != nil || info.Size() != int64(size) || info.Mode().Perm() != 0o444 {
			t.Fatalf("size %d: copy %v %v", size, info, err)
		}
		if again, _, _ := HashFile(dst); again != want {
			t.Fatalf("size %d: the copy's content differs", size)
		}
	}
}

// TestCopySmallGrown checks copySmall on a file larger than its fstat said
// (it grew): the rest is copied and the whole copy hashed.
func TestCopySmallGrown(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := make([]byte, smallMax+4321)
	for i := range data {
		data[i] = byte(i * 13)
	}
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, _ := HashFile(src)
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(filepath.Join(dir, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	got, n, err := copySmall(in, out)
	if err != nil || got != want || n != int64(len(data)) {
		t.Fatalf("got %s %d %v, want %s %d", got, n, err, want, len(data))
	}
}
