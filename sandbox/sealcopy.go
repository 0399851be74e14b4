package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Sealing is bounded by the size fstat gave when the file was checked: the
// copy reads at most one byte more, and a file that grew while it was
// being sealed is refused rather than copied without end. A sparse file
// (fewer blocks allocated than its size) is copied extent by extent
// (SEEK_DATA/SEEK_HOLE), so its holes stay holes in the copy; its apparent
// size is what every bound counts.

// ErrSealGrew is a file that grew past its checked size while it was being
// sealed.
var ErrSealGrew = errors.New("grew while being sealed")

// ErrSealShrank is a file that ended before its checked size while it was
// being sealed.
var ErrSealShrank = errors.New("shrank while being sealed")

// SealCopy copies the open regular file in, whose fstat is info, to out
// (open for reading and writing, empty) and returns the SHA-256 of the copy
// and its size; the copy holds exactly info.Size() bytes or it is an error.
func SealCopy(in *os.File, info os.FileInfo, out *os.File) (string, int64, error) {
	return copyThenHash(in, info, out)
}

// copyThenHash copies the open file in to out and hashes what the
// experiment will see: a small file through one buffer, a large one
// in segments of O_DIRECT writes of the hashed buffers or of
// copy_file_range with the copy hashed behind it (sealway.go),
// a sparse one extent by extent.
func copyThenHash(in *os.File, info os.FileInfo, out *os.File) (sum string, n int64, err error) {
	size := info.Size()
	limit := size + 1
	switch {
	case hasHoles(info):
		sum, n, err = copySparse(in, size, out)
	case size >= directMin:
		sum, n, err = copyLarge(in, out, size)
	case size <= smallMax:
		sum, n, err = copySmall(in, out, limit)
	default:
		if _, err := io.Copy(out, io.LimitReader(in, limit)); err != nil {
			return "", 0, fmt.Errorf("seal: %w", err)
		}
		sum, n, err = hashFromStart(out)
	}
	switch {
	case err != nil:
	case n > size:
		err = fmt.Errorf("seal %s: %w (past the %d bytes it had when checked)", in.Name(), ErrSealGrew, size)
	case n < size:
		err = fmt.Errorf("seal %s: %w (%d of the %d bytes it had when checked)", in.Name(), ErrSealShrank, n, size)
	}
	return sum, n, err
}

// hasHoles reports whether the file has fewer bytes allocated than its
// size: a sparse file.
func hasHoles(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && info.Size() > smallMax && st.Blocks*512 < info.Size()
}

// copySmall reads at most limit bytes of a small file at once, writes them
// to out and hashes the bytes written.
func copySmall(in, out *os.File, limit int64) (string, int64, error) {
	data, err := io.ReadAll(io.LimitReader(in, limit))
	if err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	if _, err := out.Write(data); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), int64(len(data)), nil
}

// extent is a run of data in a sparse file.
type extent struct{ off, n int64 }

// copySparse copies the data extents of the first size bytes of in to the
// same offsets of out, sets out's size and hashes the copy (the holes as
// zeros, without reading them). A file system without SEEK_DATA is copied
// whole. One byte past size is read to refuse a file that grew.
func copySparse(in *os.File, size int64, out *os.File) (string, int64, error) {
	exts, err := extentsOrWhole(in, size)
	if err != nil {
		return "", 0, fmt.Errorf("seal %s: %w", in.Name(), err)
	}
	for _, e := range exts {
		if err := copyExtent(in, out, e); err != nil {
			return "", 0, err
		}
	}
	if now, err := in.Stat(); err != nil || now.Size() < size {
		return "", 0, fmt.Errorf("seal %s: %w", in.Name(), errors.Join(ErrSealShrank, err))
	}
	if err := out.Truncate(size); err != nil {
		return "", 0, fmt.Errorf("seal: %w", err)
	}
	n := size
	if k, _ := in.ReadAt(make([]byte, 1), size); k > 0 {
		n++ // copyThenHash refuses it
	}
	h := sha256.New()
	if err := hashExtents(out, exts, size, h); err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// extentsOrWhole is dataExtents, or the whole file as one extent where
// the file system has no SEEK_DATA.
func extentsOrWhole(f *os.File, size int64) ([]extent, error) {
	exts, err := dataExtents(f, size)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		return []extent{{0, size}}, nil
	}
	return exts, err
}

// dataExtents lists the data of the first size bytes of f.
func dataExtents(f *os.File, size int64) ([]extent, error) {
	fd := int(f.Fd())
	var out []extent
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) || (err == nil && data >= size) {
			break // a hole to the end
		}
		if err != nil {
			return nil, err
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			return nil, err
		}
		hole = min(hole, size)
		out = append(out, extent{data, hole - data})
		off = hole
	}
	return out, nil
}

// copyExtent copies one extent of in to the same offset of out.
func copyExtent(in, out *os.File, e extent) error {
	if _, err := in.Seek(e.off, io.SeekStart); err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	if _, err := out.Seek(e.off, io.SeekStart); err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	n, err := io.Copy(out, io.LimitReader(in, e.n))
	if err == nil && n < e.n {
		err = fmt.Errorf("%s: %w", in.Name(), ErrSealShrank)
	}
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	return nil
}

// hashExtents writes the first size bytes of f, whose data lies in exts,
// into h: the extents read through mappings, the holes between them as
// zeros.
func hashExtents(f *os.File, exts []extent, size int64, h hash.Hash) error {
	var at int64
	for _, e := range append(exts, extent{size, 0}) {
		writeZeros(h, e.off-at)
		if e.n > 0 {
			if err := hashMapped(f, e.off, e.n, h); err != nil {
				return err
			}
		}
		at = e.off + e.n
	}
	return nil
}

var zeroBlock [hashBufSize]byte

// writeZeros writes n zero bytes into h.
func writeZeros(h hash.Hash, n int64) {
	for n > 0 {
		k := min(n, int64(len(zeroBlock)))
		h.Write(zeroBlock[:k])
		n -= k
	}
}
