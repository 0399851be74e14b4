package sandbox

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
)

// The workspace (the run's work and temporary folders) may hold at most
// Spec.WorkspaceBytes. It is measured by the watchdog every slow sample and
// once more by the host after the experiment ended, before collection.
// Every entry counts the larger of its apparent size (st_size) and what it
// occupies (st_blocks × 512), so neither a sparse file nor a folder full of
// preallocated blocks passes for small; a hard-linked file counts once.
// What cannot be measured — a folder that cannot be opened or read, an entry
// whose status cannot be read — counts as over the limit.

// workspaceUsage sums the entries under dirs. ok is false when some part
// of them could not be measured.
func workspaceUsage(dirs []string) (total int64, ok bool) {
	u := measureWorkspace(dirs, 0)
	return u.total, u.ok
}

// usage is one walk of a workspace: its size, whether all of it could be
// measured, and whether a regular file in it is larger than fileLimit (when
// fileLimit > 0: RLIMIT_FSIZE is one byte more, which a writer ignoring
// SIGXFSZ meets as EFBIG).
type usage struct {
	total   int64
	ok      bool
	bigFile bool
}

func measureWorkspace(dirs []string, fileLimit int64) usage {
	u := usage{ok: true}
	seen := map[[2]uint64]bool{}
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err != nil {
				u.ok = u.ok && errors.Is(err, fs.ErrNotExist) // gone meanwhile: nothing to count
				return nil
			}
			info, err := e.Info()
			if err != nil {
				u.ok = u.ok && errors.Is(err, fs.ErrNotExist)
				return nil
			}
			u.total += entryBytes(info, seen)
			u.bigFile = u.bigFile || fileLimit > 0 && info.Mode().IsRegular() && info.Size() > fileLimit
			return nil
		})
	}
	return u
}

// entryBytes is the larger of info's apparent and allocated size, or 0 for
// a further link to an inode already counted.
func entryBytes(info fs.FileInfo, seen map[[2]uint64]bool) int64 {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return info.Size()
	}
	if st.Nlink > 1 && !info.IsDir() {
		id := [2]uint64{uint64(st.Dev), st.Ino}
		if seen[id] {
			return 0
		}
		seen[id] = true
	}
	return max(st.Size, st.Blocks*512)
}

// overWorkspace reports whether dirs hold more than limit bytes, or could
// not be measured.
func overWorkspace(dirs []string, limit int64) bool {
	n, ok := workspaceUsage(dirs)
	return !ok || n > limit
}
