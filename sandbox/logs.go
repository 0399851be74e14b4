package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
)

// Console log bounds: the kept log holds at most logHalf bytes from each end,
// the tails in Result at most tailHalf bytes from each end.
const (
	logHalf  = 512 << 10
	tailHalf = 4 << 10
)

// keepLogs stores bounded copies of the console logs in the artifact folder
// and their short head+tail in res.
func keepLogs(artifactDir string, lay layout, res *Result) error {
	logs := []struct {
		src, name string
		tail      *string
	}{{lay.stdout, StdoutLog, &res.StdoutTail}, {lay.stderr, StderrLog, &res.StderrTail}}
	for _, l := range logs {
		tail, err := keepLog(l.src, filepath.Join(artifactDir, l.name), res.survivors == 0)
		if err != nil {
			return err
		}
		*l.tail = strings.ToValidUTF8(string(tail), "\uFFFD")
	}
	return nil
}

// keepLog stores the log src as dst, bounded to logHalf bytes from each
// end, and returns its head+tail bounded to tailHalf. A log kept whole (a
// plain file with one link) is renamed into place, read-only, when movable
// (no process of the run is left to write to it) and the rename works; any
// other is copied. A missing log, or one the experiment replaced with
// something else than a plain file, is kept empty.
func keepLog(src, dst string, movable bool) ([]byte, error) {
	f, info, err := openLog(src)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, writeAtomic(dst, nil)
	}
	defer f.Close()
	tail, err := headTailOf(f, info.Size(), tailHalf)
	if err != nil {
		return nil, err
	}
	whole := nlink(info) == 1 && info.Size() <= 2*logHalf
	if movable && whole && f.Chmod(0o444) == nil && os.Rename(src, dst) == nil {
		return tail, nil
	}
	kept, err := headTailOf(f, info.Size(), logHalf)
	if err != nil {
		return nil, err
	}
	return tail, writeAtomic(dst, kept)
}

// openLog opens a log without following a symlink or blocking on a FIFO.
// It returns no file, and no error, for a log that is missing or that the
// experiment replaced with something else than a plain file.
func openLog(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if os.IsNotExist(err) || errors.Is(err, syscall.ELOOP) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("log: %w", err)
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		_ = f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("log: %w", err)
		}
		return nil, nil, nil
	}
	return f, info, nil
}

// headTail returns the file whole when it holds at most 2×half bytes, else
// its first and last half bytes around a "… N bytes truncated …" marker,
// each cut moved (by at most 3 bytes) off the middle of a UTF-8 sequence.
// A missing file (or one that is not a plain file) reads as empty.
func headTail(path string, half int64) ([]byte, error) {
	f, info, err := openLog(path)
	if err != nil || f == nil {
		return nil, err
	}
	defer f.Close()
	return headTailOf(f, info.Size(), half)
}

// headTailOf is headTail for an open file of size bytes.
func headTailOf(f *os.File, size, half int64) ([]byte, error) {
	if size <= 2*half {
		return readAt(f, 0, size)
	}
	head, err := readAt(f, 0, half)
	if err != nil {
		return nil, err
	}
	end, err := readAt(f, size-half, half)
	if err != nil {
		return nil, err
	}
	head, end = runeHead(head), runeTail(end)
	marker := fmt.Sprintf("\n… %d bytes truncated …\n", size-int64(len(head)+len(end)))
	return append(append(head, marker...), end...), nil
}

// runeHead drops an incomplete UTF-8 sequence at the end of b.
func runeHead(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// runeTail drops the continuation bytes of a sequence cut at the start of b.
func runeTail(b []byte) []byte {
	i := 0
	for i < len(b) && i < utf8.UTFMax-1 && !utf8.RuneStart(b[i]) {
		i++
	}
	return b[i:]
}

func readAt(f *os.File, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	m, err := f.ReadAt(b, off)
	if int64(m) == n {
		return b, nil
	}
	if err != nil && m == 0 {
		return nil, fmt.Errorf("log: %w", err)
	}
	return b[:m], nil
}

func writeAtomic(dst string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".log-*")
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return nil
}
