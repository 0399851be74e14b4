package sandbox

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The workspace (the run's work and temporary folders) may hold at most
// Spec.WorkspaceBytes. It is measured by the watchdog every slow sample and
// once more by the host after the experiment ended, before collection.
// Every entry counts the larger of its apparent size (st_size) and what it
// occupies (st_blocks × 512), so neither a sparse file nor a folder full of
// preallocated blocks passes for small; a hard-linked file counts once.
// The sealed copies of the inputs are the harness's, not the experiment's:
// they count neither toward the total nor as a big file, by inode (a further
// hard link to one adds nothing; a copy of one is a new file and counts).
// The walk goes through directory handles (openat, fstatat), so a tree
// deeper than PATH_MAX is measured like any other. What cannot be measured —
// a folder that cannot be opened or read, an entry whose status cannot be
// read, more than maxWorkspaceEntries entries — counts as over the limit.
// While the experiment runs, the watchdog adds the files its processes hold
// open after unlinking them (see deletedOpenBytes).

// maxWorkspaceEntries bounds one measure: each entry costs a getdents share
// and an fstatat (about a microsecond), so a measure stays well under a
// second (BenchmarkWorkspaceMeasure). A workspace with more entries cannot
// be measured in time and counts as over the limit.
var maxWorkspaceEntries = 200_000 // a variable for the tests

// fileID identifies an inode.
type fileID struct{ dev, ino uint64 }

// harnessFile is a sealed copy as the harness left it in the work folder:
// the inode, its size and what the workspace measure counted for it.
type harnessFile struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Bytes int64  `json:"bytes"`
}

// harnessFileOf describes the file at p (after sealing).
func harnessFileOf(p string) (harnessFile, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return harnessFile{}, &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	return harnessFile{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Bytes: statBytes(&st)}, nil
}

// workspaceUsage sums the entries under dirs. ok is false when some part
// of them could not be measured.
func workspaceUsage(dirs []string) (total int64, ok bool) {
	u := measureWorkspace(dirs, 0, nil)
	return u.total, u.ok
}

// usage is one walk of a workspace: its size, whether all of it could be
// measured, whether a regular file in it other than a sealed copy is larger
// than fileLimit (when fileLimit > 0: RLIMIT_FSIZE is one byte more, which
// a writer ignoring SIGXFSZ meets as EFBIG), and the inodes it counted.
type usage struct {
	total   int64
	ok      bool
	bigFile bool
	entries int
	seen    map[fileID]bool
}

// walker is the state of one measure.
type walker struct {
	u         usage
	fileLimit int64
	harness   map[fileID]harnessFile
	buf       []byte // getdents buffer, shared: a folder's names are read in full before its subfolders
}

// direntBufs are the walks' getdents buffers: a new 32 KiB one per walk
// was a fresh allocation on every experiment's path.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func measureWorkspace(dirs []string, fileLimit int64, harness []harnessFile) usage {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	w := walker{u: usage{ok: true, seen: map[fileID]bool{}}, fileLimit: fileLimit,
		harness: make(map[fileID]harnessFile, len(harness)), buf: *bp}
	for _, h := range harness {
		w.harness[fileID{h.Dev, h.Ino}] = h
	}
	for _, d := range dirs {
		fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			w.fail(err)
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			w.fail(err)
		} else {
			w.add(&st)
			w.dir(fd)
		}
		_ = unix.Close(fd)
	}
	return w.u
}

// fail records an error of the walk: an entry gone meanwhile has nothing
// to count; anything else leaves part of the workspace unmeasured.
func (w *walker) fail(err error) {
	if !errors.Is(err, unix.ENOENT) {
		w.u.ok = false
	}
}

// dir measures what the open folder fd holds, depth first, through handles.
func (w *walker) dir(fd int) {
	names, err := w.names(fd, maxWorkspaceEntries-w.u.entries+1)
	if err != nil {
		w.fail(err)
		return
	}
	for _, name := range names {
		if w.u.entries++; w.u.entries > maxWorkspaceEntries {
			w.u.ok = false
			return
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			w.fail(err)
			continue
		}
		w.add(&st)
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			w.fail(err)
			continue
		}
		w.dir(sub)
		_ = unix.Close(sub)
		if !w.u.ok && w.u.entries > maxWorkspaceEntries {
			return
		}
	}
}

// names reads the names of the open folder fd but "." and "..", every one
// or, once there are more than limit, enough to tell.
func (w *walker) names(fd int, limit int) ([]string, error) {
	var names []string
	for len(names) <= limit {
		n, err := unix.Getdents(fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return names, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(w.buf[:n], -1, names)
	}
	return names, nil
}

// add counts one entry.
func (w *walker) add(st *unix.Stat_t) {
	id := fileID{st.Dev, st.Ino}
	dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if h, ok := w.harness[id]; ok && !dir && st.Size == h.Size {
		if !w.u.seen[id] {
			w.u.seen[id] = true
			w.u.total += max(0, statBytes(st)-h.Bytes) // blocks it gained since sealing
		}
		return
	}
	if st.Nlink > 1 && !dir {
		if w.u.seen[id] {
			return
		}
		w.u.seen[id] = true
	}
	w.u.total += statBytes(st)
	w.u.bigFile = w.u.bigFile || w.fileLimit > 0 && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size > w.fileLimit
}

// statBytes is the larger of an inode's apparent and allocated size.
func statBytes(st *unix.Stat_t) int64 {
	return max(st.Size, st.Blocks*512)
}

// watchedDevices are the file systems of dirs.
func watchedDevices(dirs []string) map[uint64]bool {
	out := make(map[uint64]bool, len(dirs))
	for _, d := range dirs {
		var st syscall.Stat_t
		if syscall.Stat(d, &st) == nil {
			out[st.Dev] = true
		}
	}
	return out
}
