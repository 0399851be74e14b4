package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Large inputs are sealed around the page cache: each chunk is read from
// the input into a reused buffer, hashed there, and written from that same
// buffer to the copy with O_DIRECT. The copy then needs no new page-cache
// pages: on a VM that hands free memory back to its host (a virtio balloon
// with free page reporting), the first write into such pages costs a host
// page fault per 4 KiB, and a buffered 1 GiB copy into them took 11× as
// long as into memory just freed (docs/benchmarks.md, "Session 11"). It
// also keeps a second copy of a large input out of the page cache. The
// bytes hashed are the bytes written; a file system that refuses O_DIRECT
// gets the buffered, overlapped copy instead.
const (
	directMin   = 16 << 20 // smaller files take the buffered paths
	directChunk = 4 << 20
	directAlign = 4096 // offsets, lengths and buffers of direct writes
	directBufs  = 8    // 32 MiB in flight: fewer left the hash waiting on the writes (measured)
)

// directPool holds buffers of directChunk bytes aligned to directAlign.
var directPool = sync.Pool{New: func() any {
	raw := make([]byte, directChunk+directAlign)
	skip := (directAlign - int(uintptr(unsafe.Pointer(&raw[0]))%directAlign)) % directAlign
	b := raw[skip : skip+directChunk : skip+directChunk]
	return &b
}}

// directPiece is one chunk of the input read into buf, at off.
type directPiece struct {
	buf *[]byte
	off int64
	n   int
}

// copyDirect copies the first size bytes of in to out (empty, open for
// writing) through O_DIRECT writes, hashing each chunk before it is
// written, and reads one byte past size to refuse a file that grew. ok is
// false, with nothing written, when out's file system refuses O_DIRECT or
// keeps its files in memory (tmpfs takes O_DIRECT, but its pages are the
// file: the buffered path copies in the kernel).
func copyDirect(in, out *os.File, size int64) (sum string, n int64, ok bool, err error) {
	if inMemory(out) {
		return "", 0, false, nil
	}
	h := sha256.New()
	if n, ok, err = directRange(in, out, 0, size, h); !ok || err != nil {
		return "", 0, ok, err
	}
	return hex.EncodeToString(h.Sum(nil)), n + grewPast(in, n, size), true, nil
}

// grewPast is 1 when in, of which n of size bytes were copied, holds a
// byte past size (copyThenHash then refuses it), else 0.
func grewPast(in *os.File, n, size int64) int64 {
	if n == size {
		if k, _ := in.ReadAt(make([]byte, 1), size); k > 0 {
			return 1
		}
	}
	return 0
}

// directRange copies size bytes of in at off to the same offset of out
// through O_DIRECT writes, writing each chunk into h before it is written,
// and returns how many it copied (fewer when in ended first). ok is false,
// with nothing written, when out refuses O_DIRECT.
func directRange(in, out *os.File, off, size int64, h hash.Hash) (n int64, ok bool, err error) {
	if setDirect(out, true) != nil {
		return 0, false, nil
	}
	free := make(chan *[]byte, directBufs)
	for range directBufs {
		free <- directPool.Get().(*[]byte)
	}
	pieces := make(chan directPiece, directBufs)
	var writeErr error
	var failed atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() { writeErr = writePieces(out, pieces, free, &failed) })
	var readErr error
	for n < size && readErr == nil && !failed.Load() {
		bp := <-free
		k, rerr := in.ReadAt((*bp)[:min(int64(directChunk), size-n)], off+n)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			readErr = rerr
		}
		if k == 0 {
			free <- bp
			break // shrank: copyThenHash refuses it
		}
		h.Write((*bp)[:k])
		pieces <- directPiece{bp, off + n, k}
		n += int64(k)
	}
	close(pieces)
	wg.Wait()
	for range directBufs {
		directPool.Put(<-free)
	}
	if err := errors.Join(readErr, writeErr); err != nil {
		return n, true, fmt.Errorf("seal: %w", err)
	}
	return n, true, nil
}

// writePieces writes each piece to out at its offset and hands its buffer
// back, and sets failed at its first error (the reads then stop). Whole
// aligned blocks go out directly; a piece's unaligned tail (the
// end of the file) is written through the page cache, as is everything
// after the file system refused a direct write.
func writePieces(out *os.File, pieces <-chan directPiece, free chan<- *[]byte, failed *atomic.Bool) error {
	var err error
	direct := true
	for p := range pieces {
		if err == nil {
			err = writePiece(out, p, &direct)
			failed.Store(err != nil)
		}
		free <- p.buf
	}
	if direct {
		err = errors.Join(err, setDirect(out, false))
	}
	return err
}

// writePiece writes one piece, turning O_DIRECT off (and *direct false)
// for its tail or when the file system refuses the direct write.
func writePiece(out *os.File, p directPiece, direct *bool) error {
	b := (*p.buf)[:p.n]
	if *direct {
		head := p.n &^ (directAlign - 1)
		_, err := out.WriteAt(b[:head], p.off)
		switch {
		case err == nil && head == p.n:
			return nil
		case err == nil:
			b, p.off = b[head:], p.off+int64(head)
		case !errors.Is(err, unix.EINVAL):
			return err
		}
		if err := setDirect(out, false); err != nil {
			return err
		}
		*direct = false
	}
	_, err := out.WriteAt(b, p.off)
	return err
}

// setDirect turns O_DIRECT on or off for f.
func setDirect(f *os.File, on bool) error {
	fd := int(f.Fd())
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if on {
		flags |= unix.O_DIRECT
	} else {
		flags &^= unix.O_DIRECT
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags)
	return err
}

// inMemory reports whether f is on a file system that keeps its files in
// memory.
func inMemory(f *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return false
	}
	return st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC
}
