package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyAndHash checks every sealing path (small: one buffer; middle:
// copy then hash; large: overlapped) and HashFile (buffered, mapped)
// against the SHA-256 of the bytes written, and the copy's content and mode.
func TestCopyAndHash(t *testing.T) {
	for _, size := range []int{0, 1, 4 << 10, smallMax, smallMax + 1, mapMin - 1, mapMin, mapMin + 4097, directMin + overlapChunk + 12345} {
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*31 + i/7)
		}
		if err := os.WriteFile(src, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		want := hex.EncodeToString(sum[:])
		if got, n, err := HashFile(src); err != nil || got != want || n != int64(size) {
			t.Fatalf("size %d: HashFile %s %d %v, want %s", size, got, n, err, want)
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

// A mapped file that is shorter than the range hashed (it shrank) gives an
// error, not a crash of the process.
func TestHashMappedFaultIsAnError(t *testing.T) {
	page := os.Getpagesize()
	p := filepath.Join(t.TempDir(), "short")
	must(t, os.WriteFile(p, make([]byte, page+100), 0o644))
	f, err := os.Open(p)
	must(t, err)
	defer f.Close()
	err = hashMapped(f, 0, int64(3*page), sha256.New())
	if err == nil || !strings.Contains(err.Error(), "changed while being read") {
		t.Fatalf("hashing past the end: %v", err)
	}
	h := sha256.New()
	must(t, hashMapped(f, 10, int64(page), h))
	want := sha256.Sum256(make([]byte, page))
	if string(h.Sum(nil)) != string(want[:]) {
		t.Error("an unaligned range hashed wrong")
	}
}

// TestHashSmall: a small file is hashed through a buffer of its size, one
// that grew after it was checked is hashed to its end, and one that shrank
// as it is now; the sums are sha256's.
func TestHashSmall(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	body := []byte("0123456789")
	must(t, os.WriteFile(p, body, 0o644))
	for _, checked := range []int64{10, 4, 0, 25} {
		f, err := os.Open(p)
		must(t, err)
		sum, n, err := hashSmall(f, checked)
		_ = f.Close()
		want := sha256.Sum256(body)
		if err != nil || n != int64(len(body)) || sum != hex.EncodeToString(want[:]) {
			t.Errorf("checked at %d bytes: %s %d %v", checked, sum, n, err)
		}
	}
}
