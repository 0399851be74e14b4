package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	"golang.org/x/sys/unix"
)

const hashBufSize = 1 << 20

var hashBufs = sync.Pool{New: func() any { b := make([]byte, hashBufSize); return &b }}

// HashFile returns the hex SHA-256 of the file at path and its size. A
// regular file of at least mapMin bytes is hashed from the page cache
// through mappings (hashMapped), its size as fstat gives it; a sparse one
// extent by extent, its holes as zeros without reading them (a mapping's
// read of a hole fills the page cache, and on tmpfs allocates the hole).
func HashFile(path string) (sha string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("hash: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return hashReader(f)
	}
	return hashOpened(f, info)
}

// hashOpened is HashFile of an open file whose fstat is info.
func hashOpened(f *os.File, info os.FileInfo) (sha string, size int64, err error) {
	if info.Mode().IsRegular() && info.Size() < smallHashMax {
		return hashSmall(f, info.Size())
	}
	if !info.Mode().IsRegular() || info.Size() < mapMin {
		return hashReader(f)
	}
	h := sha256.New()
	exts := []extent{{0, info.Size()}}
	if hasHoles(info) {
		if exts, err = extentsOrWhole(f, info.Size()); err != nil {
			return "", 0, fmt.Errorf("hash: %w", err)
		}
	}
	if err := hashExtents(f, exts, info.Size(), h); err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), info.Size(), nil
}

// Hashing through a mapping of the page cache saves copying every byte
// into a buffer first: about a tenth of the CPU time of hashing a large
// file (0.80 against 0.90 s for 1 GiB here).
const (
	mapMin   = 1 << 20  // smaller files are read into a buffer
	mapChunk = 64 << 20 // mapped at a time
)

// hashMapped writes n bytes of f from offset off into h, through read-only
// mappings of at most mapChunk bytes. A fault (the file shrank under the
// mapping) is an error, never a crash.
func hashMapped(f *os.File, off, n int64, h hash.Hash) error {
	page := int64(os.Getpagesize())
	for n > 0 {
		start := off &^ (page - 1)
		skip := off - start
		size := min(n+skip, mapChunk)
		if err := hashMapping(f, start, skip, size, h); err != nil {
			return err
		}
		off, n = off+size-skip, n-(size-skip)
	}
	return nil
}

// hashMapping maps size bytes of f from the page-aligned offset start and
// writes them into h but for the first skip.
func hashMapping(f *os.File, start, skip, size int64, h hash.Hash) (err error) {
	m, err := unix.Mmap(int(f.Fd()), start, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("hash: map %s: %w", f.Name(), err)
	}
	defer func() { _ = unix.Munmap(m) }()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("hash: %s changed while being read: %v", f.Name(), r)
		}
	}()
	h.Write(m[skip:])
	return nil
}

// smallHashMax: a regular file smaller than this is read into a buffer
// of its own size, not through the pooled 1 MiB one (a pool emptied by the
// collector made hashing a 5-byte input cost a fresh 1 MiB allocation).
const smallHashMax = 64 << 10

// hashSmall hashes f, of size bytes when it was checked; a file that grew
// since is hashed to its end.
func hashSmall(f *os.File, size int64) (string, int64, error) {
	data := make([]byte, size+1)
	n, err := io.ReadFull(f, data)
	switch {
	case err == nil: // it grew
		h := sha256.New()
		h.Write(data)
		bp := hashBufs.Get().(*[]byte)
		defer hashBufs.Put(bp)
		m, err := io.CopyBuffer(h, f, *bp)
		if err != nil {
			return "", 0, fmt.Errorf("hash: %w", err)
		}
		return hex.EncodeToString(h.Sum(nil)), int64(n) + m, nil
	case err != io.ErrUnexpectedEOF && err != io.EOF:
		return "", 0, fmt.Errorf("hash: %w", err)
	}
	sum := sha256.Sum256(data[:n])
	return hex.EncodeToString(sum[:]), int64(n), nil
}

func hashReader(r io.Reader) (string, int64, error) {
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	h := sha256.New()
	n, err := io.CopyBuffer(h, r, *bp)
	if err != nil {
		return "", n, fmt.Errorf("hash: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// copyAndHash copies src to a new file dst (mode perm, parents created) and
// returns the hash of the copy (copyThenHash: what the experiment will see;
// BenchmarkSeal1GiB compares it with sha256sum).
func copyAndHash(src, dst string, perm os.FileMode) (string, int64, error) {
	in, info, err := openRegular(src)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer in.Close()
	return copyFileAndHash(in, info, dst, perm, nil)
}

// copyFileAndHash is copyAndHash from an open file whose fstat is info,
// into one of b's blanks when one can be used.
func copyFileAndHash(in *os.File, info os.FileInfo, dst string, perm os.FileMode, b *blanks) (string, int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	out, ok := b.openBlank(dst)
	if !ok {
		var err error
		if out, err = os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return "", 0, fmt.Errorf("seal: %w", err)
		}
	}
	defer out.Close()
	sum, n, err := copyThenHash(in, info, out)
	if err != nil {
		return "", 0, err
	}
	if err := out.Chmod(perm); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	return sum, n, nil
}

// Where a large input cannot be sealed through O_DIRECT (sealdirect.go),
// it is copied and hashed at the same time: one goroutine copies chunks of
// overlapChunk bytes with copy_file_range while the caller hashes the part
// of the copy already written (from the page cache), so sealing takes about
// as long as the slower of the two instead of their sum.
const overlapChunk = 16 << 20

// smallMax is the largest file sealed through one user-space buffer: read
// once, hashed, written (two syscalls instead of a copy_file_range, a seek
// and the reads of a second pass). The copy holds exactly the hashed bytes.
const smallMax = 64 << 10

// hashFromStart hashes out, a regular file, from its first byte to its
// size.
func hashFromStart(out *os.File) (string, int64, error) {
	info, err := out.Stat()
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	h := sha256.New()
	if err := hashMapped(out, 0, info.Size(), h); err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), info.Size(), nil
}

// copyOverlapped copies at most limit bytes of in to out in the kernel and
// hashes out behind it (kernelRange over the whole file). Kept for the
// sealing benchmark's comparison.
func copyOverlapped(in, out *os.File, limit int64) (string, int64, error) {
	h := sha256.New()
	n, err := kernelRange(in, out, 0, limit, h)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// copyHashing copies src to dst through one user-space buffer, hashing on the
// way. Kept for the sealing benchmark's comparison.
func copyHashing(src, dst string) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer out.Close()
	sum, n, err := hashReader(io.TeeReader(in, out))
	return sum, n, err
}
