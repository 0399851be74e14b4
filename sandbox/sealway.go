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
	"time"

	"golang.org/x/sys/unix"
)

// A large input is sealed in segments, each one of two ways, whichever has
// been the faster per byte: O_DIRECT writes of the hashed buffers
// (sealdirect.go), or copy_file_range in the kernel with the copy hashed
// behind it. On the same VM the two differ by two to three times either way
// from one day to the next: where the host takes freed memory back, every
// new page-cache page costs a host page fault and the direct writes win
// (session 11: a buffered 1 GiB copy 11× slower); where the host leaves the
// memory and its disk is slow, the kernel's copy wins (session 14: 474 MB/s
// direct against 1,134 MB/s, `sha256sum` 198 MB/s). The first segment this
// process seals goes direct and the second through the kernel; from then on
// the cheaper way, with every probeEvery-th segment the other way, so that
// a change is seen. Either way the bytes hashed are the bytes of the copy.

const (
	segmentBytes = 64 << 20 // one way's stretch of a large input
	probeEvery   = 6        // one segment in this many goes the way measured slower
)

// sealWay is one way of sealing a segment.
type sealWay int

const (
	wayDirect sealWay = iota + 1 // O_DIRECT writes of the hashed buffers
	wayKernel                    // copy_file_range, the copy hashed behind it
)

// sealWays is what this process measured of the two ways.
type sealWays struct {
	mu   sync.Mutex
	cost [3]float64 // ns per byte, smoothed, by way (0: not measured yet)
	n    int        // segments chosen so far
}

var learned sealWays

// next returns the way of the next segment.
func (s *sealWays) next() sealWay {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	switch {
	case s.cost[wayDirect] == 0:
		return wayDirect
	case s.cost[wayKernel] == 0:
		return wayKernel
	}
	best, other := wayDirect, wayKernel
	if s.cost[wayKernel] < s.cost[wayDirect] {
		best, other = other, best
	}
	if s.n%probeEvery == 0 {
		return other
	}
	return best
}

// record notes that a whole segment of n bytes took d the way way.
func (s *sealWays) record(way sealWay, d time.Duration, n int64) {
	c := float64(d.Nanoseconds()) / float64(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.cost[way]; old > 0 {
		c = (old + c) / 2
	}
	s.cost[way] = c
}

// copyLarge copies the first size bytes of in to out (empty) segment by
// segment, the way next chooses (the kernel's where out refuses O_DIRECT
// or keeps its files in memory), and returns the SHA-256 of the copy and
// its length: one more than size when in grew, less when it shrank.
func copyLarge(in, out *os.File, size int64) (string, int64, error) {
	canDirect := !inMemory(out)
	h := sha256.New()
	var n int64
	for n < size {
		l := min(int64(segmentBytes), size-n)
		way := wayKernel
		if canDirect {
			way = learned.next()
		}
		start := time.Now()
		var k int64
		var err error
		if way == wayDirect {
			var ok bool
			if k, ok, err = directRange(in, out, n, l, h); !ok {
				canDirect, way, start = false, wayKernel, time.Now()
			}
		}
		if way == wayKernel {
			k, err = kernelRange(in, out, n, l, h)
		}
		if err != nil {
			return "", 0, err
		}
		if k == l {
			learned.record(way, time.Since(start), k)
		}
		n += k
		if k < l {
			break // shrank: copyThenHash refuses it
		}
	}
	return hex.EncodeToString(h.Sum(nil)), n + grewPast(in, n, size), nil
}

// kernelRange copies size bytes of in at off to the same offset of out with
// copy_file_range (a read and a write where the kernel cannot), in pieces of
// overlapChunk, while the copy is read back into h behind it; it returns how
// many it copied (fewer when in ended first).
func kernelRange(in, out *os.File, off, size int64, h hash.Hash) (int64, error) {
	progress := make(chan int64, 64)
	var copyErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(progress)
		var done int64
		for done < size {
			k, err := copyPiece(in, out, off+done, min(overlapChunk, size-done))
			done += k
			if err != nil {
				copyErr = err
				return
			}
			if k == 0 {
				return
			}
			progress <- done
		}
	})
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	var hashed int64
	var readErr error
	for avail := range progress {
		for hashed < avail && readErr == nil {
			k, err := out.ReadAt((*bp)[:min(int64(len(*bp)), avail-hashed)], off+hashed)
			h.Write((*bp)[:k])
			hashed += int64(k)
			if err != nil && (!errors.Is(err, io.EOF) || k == 0) {
				readErr = err
			}
		}
	}
	wg.Wait()
	if err := errors.Join(copyErr, readErr); err != nil {
		return hashed, fmt.Errorf("seal: %w", err)
	}
	return hashed, nil
}

// copyPiece copies up to n bytes of in at off to out at off and returns
// how many (0 at in's end).
func copyPiece(in, out *os.File, off, n int64) (int64, error) {
	var done int64
	for done < n {
		roff, woff := off+done, off+done
		k, err := unix.CopyFileRange(int(in.Fd()), &roff, int(out.Fd()), &woff, int(n-done), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil && cannotCopyInKernel(err) {
			k2, err := copyThrough(in, out, off+done, n-done)
			return done + k2, err
		}
		if err != nil {
			return done, err
		}
		if k == 0 {
			break
		}
		done += int64(k)
	}
	return done, nil
}

// cannotCopyInKernel reports whether copy_file_range refused the pair of
// files rather than failed.
func cannotCopyInKernel(err error) bool {
	for _, e := range []error{unix.EXDEV, unix.EINVAL, unix.EOPNOTSUPP, unix.ENOSYS, unix.EBADF} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// copyThrough copies up to n bytes of in at off to out at off through a
// buffer.
func copyThrough(in, out *os.File, off, n int64) (int64, error) {
	k, err := io.Copy(io.NewOffsetWriter(out, off), io.NewSectionReader(in, off, n))
	return k, err
}
