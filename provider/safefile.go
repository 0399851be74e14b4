package provider

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Files in folders an agent can write (a turn's or review's log folder,
// the agent's state folder) are made by the supervisor without following
// a link: the agent may have left a symlink, a folder or a FIFO under any
// name there before the supervisor opens it (docs/security.md, "The record
// and the agent").

// ErrNotOurs is returned for a name in an agent-writable folder that is
// not what the supervisor makes there: a symlink, an existing file, a
// folder that is not a folder.
var ErrNotOurs = errors.New("refused: not a file or folder the supervisor made")

// MakeNewDir makes dir with mkdir(2); a dir that exists already, whatever
// it is, is refused: a folder someone else may have filled is never reused.
func MakeNewDir(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists: %w", dir, ErrNotOurs)
		}
		return fmt.Errorf("make %s: %w", dir, err)
	}
	return nil
}

// EnsureDir makes dir with mkdir(2) (its parents with MkdirAll: they are
// the supervisor's), or accepts an existing one only when it is a real
// folder, never a symlink to one.
func EnsureDir(dir string, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("make %s: %w", filepath.Dir(dir), err)
	}
	err := os.Mkdir(dir, perm)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		if err != nil {
			return fmt.Errorf("make %s: %w", dir, err)
		}
		return nil
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is a %s, not a folder: %w", dir, kind(st.Mode()), ErrNotOurs)
	}
	return nil
}

// CreateNew creates path for writing with O_CREAT|O_EXCL|O_NOFOLLOW: a
// name that exists (a symlink included) is refused, so the file is one
// this process made.
func CreateNew(path string, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s exists: %w", path, ErrNotOurs)
		}
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return f, nil
}

// WriteNew writes data to a new file at path (CreateNew).
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	f, err := CreateNew(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// OpenNoFollow opens path for reading without following a symlink and
// without blocking on a FIFO, and only when it is a regular file.
func OpenNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink: %w", path, ErrNotOurs)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("check %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		_ = f.Close()
		return nil, fmt.Errorf("%s is a %s, not a file: %w", path, kind(st.Mode()), ErrNotOurs)
	}
	return f, nil
}

// ReadBounded reads at most limit bytes of the regular file at path
// (OpenNoFollow); a longer file is an error.
func ReadBounded(path string, limit int64) ([]byte, error) {
	f, err := OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "folder"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m.IsRegular():
		return "file"
	}
	return "special file"
}
