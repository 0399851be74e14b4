package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
		short, err := headTail(l.src, tailHalf)
		if err != nil {
			return err
		}
		*l.tail = strings.ToValidUTF8(string(short), "\uFFFD")
		dst := filepath.Join(artifactDir, l.name)
		if res.survivors == 0 && moveWhole(l.src, dst) {
			continue
		}
		kept, err := headTail(l.src, logHalf)
		if err != nil {
			return err
		}
		if err := writeAtomic(dst, kept); err != nil {
			return err
		}
	}
	return nil
}

// moveWhole renames a log that is kept whole (a plain file of at most
// 2×logHalf bytes with one link) into the artifact folder, read-only, and
// reports whether it did. The caller guarantees that no process of the run
// is left to write to it; anything else (another filesystem, a log the
// experiment replaced) is copied instead.
func moveWhole(src, dst string) bool {
	f, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || nlink(info) != 1 || info.Size() > 2*logHalf {
		return false
	}
	if f.Chmod(0o444) != nil {
		return false
	}
	return os.Rename(src, dst) == nil
}

// headTail returns the file whole when it holds at most 2×half bytes, else
// its first and last half bytes around a "… N bytes truncated …" marker.
// A missing file reads as empty.
func headTail(path string, half int64) ([]byte, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	size := info.Size()
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
	marker := fmt.Sprintf("\n… %d bytes truncated …\n", size-2*half)
	return append(append(head, marker...), end...), nil
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
