package sandbox

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Checking a view's stamps before every launch is a lstat per source item,
// per file inside an item folder and per copy: about 20 paths, 60–80 µs of
// every Bubblewrap launch on the AMD EPYC host of session 11. An inotify
// instance watching each stamped path, and each folder holding one, tells
// instead whether anything happened to them since the last check: with no
// event that concerns a stamp, the stamps are not read again. In a folder
// that is not stamped itself (/etc, the run folders' parent, where every
// run renames folders) only events naming a stamped entry count; in a
// stamped folder every event does (its own times change). Any such event,
// an overflow of the queue, a watch removed, or a second since the last
// full check (a write through a shared mapping raises no event) makes fresh
// read every stamp, as before.

// The changes to a stamped path's inode, and to the names a folder holds,
// that can change a stamp.
const (
	watchPath   = unix.IN_ATTRIB | unix.IN_MODIFY | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW
	watchFolder = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_DONT_FOLLOW
	fullEvery   = time.Second
)

// stampWatch is one view's inotify instance; a nil one watches nothing.
type stampWatch struct {
	fd    int
	full  time.Time                 // the last full check
	all   map[int32]bool            // watches of stamped paths: every event counts
	names map[int32]map[string]bool // watches of other folders: the stamped names in each
}

// watchStamps watches every path of stamps and the folder that holds it, or
// returns nil when inotify is not available or a path cannot be watched
// (fresh then reads every stamp, every time). The first check after it is
// a full one, which sees what changed before the watches began.
func watchStamps(stamps []stamp) *stampWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	w := &stampWatch{fd: fd, all: map[int32]bool{}, names: map[int32]map[string]bool{}}
	stamped := map[string]bool{}
	for _, s := range stamps {
		stamped[s.path] = true
	}
	for _, s := range stamps {
		if err := w.add(s, stamped); err != nil {
			w.close()
			return nil
		}
	}
	return w
}

// add watches the stamped path s (as a folder too, when it is one) and,
// unless it is stamped itself, the folder holding it.
func (w *stampWatch) add(s stamp, stamped map[string]bool) error {
	if s.ok {
		mask := uint32(watchPath)
		if s.mode&syscall.S_IFMT == syscall.S_IFDIR {
			mask |= watchFolder
		}
		wd, err := unix.InotifyAddWatch(w.fd, s.path, mask|unix.IN_MASK_ADD)
		if err != nil {
			return err
		}
		w.all[int32(wd)] = true
	}
	dir := filepath.Dir(s.path)
	if stamped[dir] {
		return nil // its own watch sees every change to its names
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchFolder|unix.IN_MASK_ADD)
	if err != nil {
		return err
	}
	if w.names[int32(wd)] == nil {
		w.names[int32(wd)] = map[string]bool{}
	}
	w.names[int32(wd)][filepath.Base(s.path)] = true
	return nil
}

// quiet reports whether nothing that concerns a stamp happened since the
// last call that returned false, and that call was less than fullEvery
// ago. It drains the queue either way; on false the caller reads every
// stamp.
func (w *stampWatch) quiet() bool {
	if w == nil {
		return false
	}
	changed := time.Since(w.full) >= fullEvery
	var buf [4096]byte
	for {
		n, err := unix.Read(w.fd, buf[:])
		if n <= 0 {
			changed = changed || !errors.Is(err, unix.EAGAIN)
			break
		}
		changed = w.concerns(buf[:n]) || changed
	}
	if changed {
		w.full = time.Now()
	}
	return !changed
}

// concerns reports whether one of the events in b can change a stamp.
func (w *stampWatch) concerns(b []byte) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		n := int(binary.NativeEndian.Uint32(b[12:]))
		if len(b) < unix.SizeofInotifyEvent+n {
			return true // cut short: count it
		}
		name := string(trimNUL(b[unix.SizeofInotifyEvent : unix.SizeofInotifyEvent+n]))
		b = b[unix.SizeofInotifyEvent+n:]
		if mask&(unix.IN_Q_OVERFLOW|unix.IN_IGNORED) != 0 || w.all[wd] || name == "" || w.names[wd][name] {
			return true
		}
	}
	return len(b) > 0
}

// trimNUL drops the NUL padding of an inotify event's name.
func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// close ends the watch.
func (w *stampWatch) close() {
	if w != nil && w.fd >= 0 {
		_ = unix.Close(w.fd)
		w.fd = -1
	}
}
