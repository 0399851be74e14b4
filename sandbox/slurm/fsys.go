package slurm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// Files reaches SHARED_DIR where the cluster is reached: mounted on this
// host, or on a login node. Paths are SHARED_DIR paths; local paths are
// this host's. A missing file is reported as fs.ErrNotExist.
type Files interface {
	// ReadFile returns the content of path.
	ReadFile(path string) ([]byte, error)
	// WriteFile replaces path atomically with data (parents created).
	WriteFile(path string, data []byte, mode os.FileMode) error
	// Touch sets path's modification time to now, creating it if needed.
	Touch(path string) error
	// Sum is the sha256 of path's content.
	Sum(path string) (string, error)
	// Put copies the local file src to dst atomically, checking that the
	// bytes that arrived hash to want.
	Put(src, dst string, mode os.FileMode, want string) error
	// Get copies src to the local file dst atomically, checking that the
	// bytes that arrived hash to want ("" = do not check).
	Get(src, dst string, mode os.FileMode, want string) error
	// RemoveAll removes path and what it holds; a missing path is no
	// error.
	RemoveAll(path string) error
}

// LocalFiles is SHARED_DIR mounted on this host.
type LocalFiles struct{}

// maxReadFile bounds what ReadFile reads: the job folder's small JSON
// files (its record, its live figures), which a job writes.
const maxReadFile = 64 << 20

// ReadFile reads path, which must be a regular file of at most
// maxReadFile bytes: what a job left there cannot block the reader (a
// FIFO), lead it elsewhere (a symlink) or fill its memory.
func (LocalFiles) ReadFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case st.Size() > maxReadFile:
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d a job's file may", path, st.Size(), maxReadFile)
	}
	return io.ReadAll(io.LimitReader(f, maxReadFile+1))
}

// WriteFile writes path atomically.
func (LocalFiles) WriteFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeAtomic(path, data, mode)
}

// RemoveAll removes path and what it holds, giving its folders back their
// write and search bits first if that is what stops it.
func (LocalFiles) RemoveAll(path string) error {
	if os.RemoveAll(path) == nil {
		return nil
	}
	_ = filepath.WalkDir(path, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(path)
}

// Touch sets path's modification time to now.
func (l LocalFiles) Touch(path string) error {
	now := time.Now()
	if err := os.Chtimes(path, now, now); err == nil {
		return nil
	}
	return l.WriteFile(path, nil, 0o644)
}

// Sum hashes path.
func (LocalFiles) Sum(path string) (string, error) {
	sum, _, err := sandbox.HashFile(path)
	return sum, err
}

// Put copies src to dst, hash-checked.
func (LocalFiles) Put(src, dst string, mode os.FileMode, want string) error {
	return copyFile(src, dst, mode, want)
}

// Get copies src to dst, hash-checked.
func (LocalFiles) Get(src, dst string, mode os.FileMode, want string) error {
	return copyFile(src, dst, mode, want)
}

// exists reports whether path is there; an error other than a missing
// file counts as present (so a crash is looked for rather than ignored).
func (c *Cluster) exists(path string) bool {
	_, err := c.cfg.Files.ReadFile(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// writeJSON writes v to path in the shared folder.
func (c *Cluster) writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.cfg.Files.WriteFile(path, data, 0o644)
}

// readJSON reads path of the shared folder into v.
func (c *Cluster) readJSON(path string, v any) error {
	data, err := c.cfg.Files.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
