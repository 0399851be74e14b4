package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
// returns the hash of the copy: copy_file_range (io.Copy between two
// *os.File) and SHA-256 of the copy from the page cache, overlapped for
// large files; a small file goes through one buffer (copySmall). This hashes exactly what the experiment will see
// (BenchmarkSeal1GiB compares it with sha256sum; a user-space tee or a
// pipelined read/hash/write was slower).
func copyAndHash(src, dst string, perm os.FileMode) (string, int64, error) {
	in, info, err := openRegular(src)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer in.Close()
	return copyFileAndHash(in, info, dst, perm)
}

// copyFileAndHash is copyAndHash from an open file whose fstat is info.
func copyFileAndHash(in *os.File, info os.FileInfo, dst string, perm os.FileMode) (string, int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
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

// Large inputs are copied and hashed at the same time: one goroutine copies
// chunks with copy_file_range while the caller hashes the part of the copy
// already written (from the page cache), so sealing takes about as long as
// the slower of the two instead of their sum.
const (
	overlapMin   = 16 << 20 // smaller files are copied, then hashed
	overlapChunk = 16 << 20
)

// smallMax is the largest file sealed through one user-space buffer: read
// once, hashed, written (two syscalls instead of a copy_file_range, a seek
// and the reads of a second pass). The copy holds exactly the hashed bytes.
const smallMax = 64 << 10

// copyThenHash copies the open file in to out with copy_file_range (io.Copy
// between two *os.File) and hashes the copy — what the experiment will see.
func copyThenHash(in *os.File, info os.FileInfo, out *os.File) (string, int64, error) {
	if info.Size() >= overlapMin {
		return copyOverlapped(in, out)
	}
	if info.Size() <= smallMax {
		return copySmall(in, out)
	}
	if _, err := io.Copy(out, in); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	return hashFromStart(out)
}

// copySmall reads a small file whole, writes it to out and hashes the bytes
// written. A file that grew past smallMax since its fstat is copied on with
// copy_file_range and the copy hashed from the start.
func copySmall(in, out *os.File) (string, int64, error) {
	data, err := io.ReadAll(io.LimitReader(in, smallMax+1))
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	if _, err := out.Write(data); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	if len(data) > smallMax {
		if _, err := io.Copy(out, in); err != nil {
			return "", 0, fmt.Errorf("seal: %w", err)
		}
		return hashFromStart(out)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), int64(len(data)), nil
}

// hashFromStart hashes out from its first byte.
func hashFromStart(out *os.File) (string, int64, error) {
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	return hashReader(out)
}

// copyOverlapped copies in to out in chunks on one goroutine and hashes out
// behind it on this one.
func copyOverlapped(in, out *os.File) (string, int64, error) {
	progress := make(chan int64, 64)
	var copyErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(progress)
		var done int64
		for {
			n, err := io.Copy(out, io.LimitReader(in, overlapChunk))
			done += n
			if err != nil {
				copyErr = err
				return
			}
			if n == 0 {
				return
			}
			progress <- done
		}
	})
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	h := sha256.New()
	var hashed int64
	var readErr error
	for avail := range progress {
		for hashed < avail && readErr == nil {
			n, err := out.ReadAt((*bp)[:min(int64(len(*bp)), avail-hashed)], hashed)
			h.Write((*bp)[:n])
			hashed += int64(n)
			readErr = err
		}
	}
	wg.Wait()
	if err := errors.Join(copyErr, readErr); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), hashed, nil
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
