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
// direct, sparse) on a file that grew after its fstat: the copy stops
// one byte past the checked size and is refused with ErrSealGrew.
func TestSealCopyRefusesAGrownFile(t *testing.T) {
	cases := []struct {
		name   string
		size   int64
		sparse bool
	}{
		{"small", 4 << 10, false}, {"middle", mapMin + 4097, false},
		{"direct", directMin + 12345, false}, {"sparse", 64 << 20, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			writeTestFile(t, src, c.size, c.sparse)
			in, err := os.Open(src)
			must(t, err)
			defer in.Close()
			info, err := in.Stat()
			must(t, err)
			f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			_, err = f.Write(make([]byte, 3*overlapChunk)) // grows by far more than one chunk
			must(t, errors.Join(err, f.Close()))
			out, err := os.Create(filepath.Join(dir, "dst"))
			must(t, err)
			defer out.Close()
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
// 256 MiB): the hash is that of all its bytes, holes as zeros, and the
// holes are never read, so at most a sixteenth of the file is in the page
// cache afterwards (reading the holes through a mapping put all 256 MiB
// there, and on tmpfs allocated it).
func TestHashFileSkipsHoles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	const size = 256 << 20
	writeTestFile(t, src, size, true)
	if allocated(t, src) >= size/2 {
		t.Skipf("the file system of %s does not keep holes; nothing to check", dir)
	}
	data, err := os.ReadFile(src)
	must(t, err)
	want := sha256.Sum256(data)
	data = nil
	f, err := os.Open(src)
	must(t, err)
	defer f.Close()
	must(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)) // the ReadFile's pages out again
	got, n, err := HashFile(src)
	if err != nil || n != size || got != hex.EncodeToString(want[:]) {
		t.Fatalf("hashed %s %d %v, want %x %d", got, n, err, want, size)
	}
	// The data's 48 pages and what readahead takes around them (4 MiB
	// here), against the file's 65,536.
	if resident := residentPages(t, f, size); resident > size/os.Getpagesize()/16 {
		t.Fatalf("%d pages of the file are in the page cache after hashing it, want its 48 pages of data and readahead's", resident)
	}
	if a := allocated(t, src); a >= size/2 {
		t.Fatalf("hashing allocated the holes: %d bytes", a)
	}
}
