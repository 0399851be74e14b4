package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

const hashBufSize = 1 << 20

var hashBufs = sync.Pool{New: func() any { b := make([]byte, hashBufSize); return &b }}

// HashFile returns the hex SHA-256 of the file at path and its size.
func HashFile(path string) (sha string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("hash: %w", err)
	}
	defer f.Close()
	return hashReader(f)
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
// returns the hash of the copy. The copy is made with copy_file_range (io.Copy
// between two *os.File) and then hashed from the page cache, which measured
// faster than hashing through a user-space buffer (see BenchmarkSeal*), and it
// hashes exactly the bytes the experiment will see.
func copyAndHash(src, dst string, perm os.FileMode) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		return "", 0, fmt.Errorf("seal: copy %s: %w", src, err)
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	sum, n, err := hashReader(out)
	if err != nil {
		return "", 0, err
	}
	if err := out.Chmod(perm); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	return sum, n, nil
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
