package sandbox

import (
	"errors"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Checking a view's stamps before every launch is a lstat per source item,
// per file inside an item folder and per copy: about 20 paths, 60–80 µs of
// every Bubblewrap launch on the AMD EPYC host of session 11. An inotify
// instance watching each stamped path and its folder tells instead whether
// anything happened to them since the last check: with no event the stamps
// are not read again. Any event, an overflow of the queue, or a second since
// the last full check (a write through a shared mapping raises no event)
// makes fresh read them all, as before; the watch only ever skips a check
// whose answer it knows.

// watchEvents are the changes to a stamped path (its inode) and to a
// folder holding one (its names) that can change a stamp.
const (
	watchPath   = unix.IN_ATTRIB | unix.IN_MODIFY | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW
	watchFolder = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_DONT_FOLLOW
	fullEvery   = time.Second
)

// stampWatch is one view's inotify instance; a nil one watches nothing.
type stampWatch struct {
	fd   int
	full time.Time // the last full check
}

// watchStamps watches every path of stamps and the folder that holds it, or
// returns nil when inotify is not available or a path cannot be watched
// (fresh then reads every stamp, every time).
func watchStamps(stamps []stamp) *stampWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	w := &stampWatch{fd: fd} // the first check is a full one: it sees what changed before the watch began
	folders := map[string]bool{}
	for _, s := range stamps {
		folders[filepath.Dir(s.path)] = true
		if !s.ok {
			continue
		}
		if _, err := unix.InotifyAddWatch(fd, s.path, watchPath); err != nil {
			w.close()
			return nil
		}
	}
	for dir := range folders {
		if _, err := unix.InotifyAddWatch(fd, dir, watchFolder); err != nil {
			w.close()
			return nil
		}
	}
	return w
}

// quiet reports whether nothing happened to the watched paths since the
// last call that returned false, and less than fullEvery ago; it drains
// what happened otherwise. The caller then reads every stamp.
func (w *stampWatch) quiet() bool {
	if w == nil {
		return false
	}
	var buf [4096]byte
	n, err := unix.Read(w.fd, buf[:])
	if n <= 0 && errors.Is(err, unix.EAGAIN) && time.Since(w.full) < fullEvery {
		return true
	}
	for n > 0 {
		n, _ = unix.Read(w.fd, buf[:])
	}
	w.full = time.Now()
	return false
}

// close ends the watch.
func (w *stampWatch) close() {
	if w != nil && w.fd >= 0 {
		_ = unix.Close(w.fd)
		w.fd = -1
	}
}
