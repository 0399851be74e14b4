package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSealCopyRefusesAGrownFile checks every sealing path (small, middle,
// direct, overlapped: the direct path's fallback, taken on tmpfs, sparse)
// on a file that grew after its fstat: the copy stops one byte past the
// checked size and is refused with ErrSealGrew.
func TestSealCopyRefusesAGrownFile(t *testing.T) {
	for _, c := range sealPaths(t) {
		t.Run(c.name, func(t *testing.T) {
			in, info, out := openSealCase(t, c)
			f, err := os.OpenFile(in.Name(), os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			_, err = f.Write(make([]byte, 3*overlapChunk)) // grows by far more than one chunk
			must(t, errors.Join(err, f.Close()))
			_, _, err = SealCopy(in, info, out)
			if !errors.Is(err, ErrSealGrew) {
				t.Fatalf("a grown file: %v, want ErrSealGrew", err)
			}
			if got, _ := out.Stat(); got.Size() > c.size+1 {
				t.Fatalf("copied %d bytes of a file checked at %d", got.Size(), c.size)
			}
		})
	}
}

// TestSealCopyRefusesAShrunkFile checks every sealing path on a file cut
// short after its fstat: the seal is an error, never a copy shorter than
// the size that was checked.
func TestSealCopyRefusesAShrunkFile(t *testing.T) {
	for _, c := range sealPaths(t) {
		t.Run(c.name, func(t *testing.T) {
			in, info, out := openSealCase(t, c)
			must(t, os.Truncate(in.Name(), c.size/2))
			if _, _, err := SealCopy(in, info, out); err == nil {
				t.Fatalf("a file cut to %d bytes of the %d checked was sealed", c.size/2, c.size)
			}
		})
	}
}

// sealCase is a file of size bytes to seal, sparse or not, into a copy in
// outDir (the test's own folder when empty).
type sealCase struct {
	name   string
	size   int64
	sparse bool
	outDir string
}

// sealPaths lists one case for each way of sealing; the overlapped one only
// where /dev/shm is a tmpfs.
func sealPaths(t *testing.T) []sealCase {
	cases := []sealCase{
		{"small", 4 << 10, false, ""}, {"middle", mapMin + 4097, false, ""},
		{"direct", directMin + 12345, false, ""}, {"sparse", 64 << 20, true, ""},
	}
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) == nil && st.Type == unix.TMPFS_MAGIC {
		cases = append(cases, sealCase{"overlapped", directMin + 12345, false, "/dev/shm"})
	} else {
		t.Log("no tmpfs at /dev/shm: the overlapped path is not checked here")
	}
	return cases
}

// openSealCase writes c's file, opens it and its fstat, and creates the
// copy to seal it into.
func openSealCase(t *testing.T, c sealCase) (*os.File, os.FileInfo, *os.File) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeTestFile(t, src, c.size, c.sparse)
	in, err := os.Open(src)
	must(t, err)
	t.Cleanup(func() { in.Close() })
	info, err := in.Stat()
	must(t, err)
	outDir := dir
	if c.outDir != "" {
		outDir, err = os.MkdirTemp(c.outDir, "seal-test-")
		must(t, err)
		t.Cleanup(func() { os.RemoveAll(outDir) })
	}
	out, err := os.Create(filepath.Join(outDir, "dst"))
	must(t, err)
	t.Cleanup(func() { out.Close() })
	if c.outDir != "" && !inMemory(out) {
		t.Fatalf("%s is not in memory: the case would not take the overlapped path", out.Name())
	}
	return in, info, out
}

// TestSealCopyKeepsHoles seals a sparse file (a few data extents in a
// 256 MiB file): the copy hashes like the original, has its apparent size,
// and allocates about what the original does, not its size.
func TestSealCopyKeepsHoles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	const size = 256 << 20
	writeTestFile(t, src, size, true)
	srcBlocks := allocated(t, src)
	if srcBlocks >= size/2 {
		t.Skipf("the file system of %s does not keep holes (%d bytes allocated of %d); nothing to check", dir, srcBlocks, size)
	}
	want, _, err := HashFile(src)
	must(t, err)
	dst := filepath.Join(dir, "dst")
	got, n, err := copyAndHash(src, dst, 0o444)
	if err != nil || got != want || n != size {
		t.Fatalf("sealed %s %d %v, want %s %d", got, n, err, want, size)
	}
	if again, _, _ := HashFile(dst); again != want {
		t.Fatal("the copy's content differs")
	}
	dstBlocks := allocated(t, dst)
	t.Logf("apparent %d bytes; allocated: original %d, sealed copy %d", size, srcBlocks, dstBlocks)
	if dstBlocks > 2*srcBlocks+1<<20 {
		t.Fatalf("the sealed copy allocates %d bytes, the original %d: its holes were filled", dstBlocks, srcBlocks)
	}
}

// writeTestFile writes a file of size bytes: patterned bytes, or, sparse,
// three 64 KiB extents (at the start, the middle, the end) between holes.
func writeTestFile(t *testing.T, path string, size int64, sparse bool) {
	t.Helper()
	f, err := os.Create(path)
	must(t, err)
	defer f.Close()
	block := make([]byte, 64<<10)
	for i := range block {
		block[i] = byte(i*7 + 1)
	}
	if !sparse {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*31 + i/7)
		}
		_, err = f.Write(data)
		must(t, err)
		return
	}
	for _, off := range []int64{0, size / 2, size - int64(len(block))} {
		_, err := f.WriteAt(block, off)
		must(t, err)
	}
}

// allocated is the bytes the file system allocated for path.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	must(t, syscall.Stat(path, &st))
	return st.Blocks * 512
}

// TestHashFileSkipsHoles hashes a sparse file (three 64 KiB extents in
// 256 MiB) on tmpfs: the hash is that of all its bytes, holes as zeros, and
// the holes are never read, so the file allocates no more than before
// (reading the holes through a mapping allocated all 256 MiB on tmpfs, and
// on a disk file system filled the page cache with them).
func TestHashFileSkipsHoles(t *testing.T) {
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skip("no tmpfs at /dev/shm: on a disk file system a read hole allocates nothing, so nothing shows it")
	}
	dir, err := os.MkdirTemp("/dev/shm", "hash-test-")
	must(t, err)
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "src")
	const size = 256 << 20
	writeTestFile(t, src, size, true)
	before := allocated(t, src)
	got, n, err := HashFile(src)
	if want := sparseTestHash(size); err != nil || n != size || got != want {
		t.Fatalf("hashed %s %d %v, want %s %d", got, n, err, want, size)
	}
	if after := allocated(t, src); after != before {
		t.Fatalf("hashing the file made it allocate %d bytes, against %d before: the holes were read", after, before)
	}
}

// sparseTestHash is the SHA-256 of the sparse file writeTestFile makes of
// size bytes, computed without it.
func sparseTestHash(size int64) string {
	block := make([]byte, 64<<10)
	for i := range block {
		block[i] = byte(i*7 + 1)
	}
	h := sha256.New()
	var at int64
	for _, off := range []int64{0, size / 2, size - int64(len(block))} {
		writeZeros(h, off-at)
		h.Write(block)
		at = off + int64(len(block))
	}
	writeZeros(h, size-at)
	return hex.EncodeToString(h.Sum(nil))
}
