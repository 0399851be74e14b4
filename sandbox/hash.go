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
// returns the hash of exactly the bytes written. Reading and hashing run in
// this goroutine while a second one writes the previous chunk, so sealing
// costs about max(hash, write) instead of their sum (see BenchmarkSeal1GiB).
func copyAndHash(src, dst string, perm os.FileMode) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer out.Close()
	sum, n, err := pipeCopy(in, out)
	if err != nil {
		return "", 0, fmt.Errorf("seal: copy %s: %w", src, err)
	}
	if err := out.Chmod(perm); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	return sum, n, nil
}

const pipeChunk = 4 << 20

// pipeCopy reads r in chunks, hashing each one here while a writer goroutine
// (owned and waited for here) writes the previous chunk to w.
func pipeCopy(r io.Reader, w io.Writer) (string, int64, error) {
	free := make(chan []byte, 3)
	for range cap(free) {
		free <- make([]byte, pipeChunk)
	}
	full := make(chan []byte, cap(free))
	var werr error
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range full {
			if werr == nil {
				_, werr = w.Write(b)
			}
			free <- b[:cap(b)]
		}
	})
	h := sha256.New()
	var n int64
	var rerr error
	for rerr == nil {
		buf := <-free
		m, err := io.ReadFull(r, buf)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			rerr = io.EOF
		} else if err != nil {
			rerr = err
		}
		h.Write(buf[:m])
		n += int64(m)
		full <- buf[:m]
	}
	close(full)
	wg.Wait()
	if rerr != io.EOF {
		return "", n, rerr
	}
	if werr != nil {
		return "", n, werr
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// copyThenHash copies with copy_file_range (io.Copy between two *os.File)
// and then hashes the copy. Kept for the sealing benchmark's comparison.
func copyThenHash(src, dst string) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	return hashReader(out)
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
