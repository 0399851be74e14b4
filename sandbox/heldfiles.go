package sandbox

import (
	"bytes"
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// A file the experiment unlinked while holding it open (Python's
// tempfile.TemporaryFile makes such files) has no name for the workspace walk
// to find, yet occupies the disk until its last descriptor closes. The
// watchdog's slow sample therefore also reads the descriptor tables of the
// run's processes: one /proc/PID/fd listing per process, one readlink per
// descriptor, and an fstat only for a link whose target ends in " (deleted)"
// (or is too long to read).
// A regular file with no link left on a file system of the watched folders
// counts like a listed one (the larger of its apparent and allocated size),
// each inode once, whichever processes hold it.

// deletedSuffix ends the link target of a descriptor whose file was unlinked.
var deletedSuffix = []byte(" (deleted)")

// deletedOpenBytes sums the unlinked regular files on the devices devs that
// the processes pids hold open; seen holds the inodes already counted and
// gains the ones counted here. ok is false when a descriptor table that
// exists could not be read.
func deletedOpenBytes(pids []int, devs map[uint64]bool, seen map[fileID]bool) (total int64, ok bool) {
	ok = true
	link := make([]byte, 4096)
	buf := make([]byte, 16<<10)
	for _, pid := range pids {
		n, err := heldByPid(pid, devs, seen, link, buf)
		total += n
		if err != nil && !gone(err) {
			ok = false
		}
	}
	return total, ok
}

// mayBeDeleted reports whether descriptor name of the /proc/PID/fd folder
// fd may refer to an unlinked file: its target ends in " (deleted)", or
// could not be read in full (a path too long for the buffer or the kernel).
func mayBeDeleted(fd int, name string, link []byte) bool {
	n, err := unix.Readlinkat(fd, name, link)
	switch {
	case errors.Is(err, unix.ENOENT):
		return false // closed meanwhile
	case err != nil || n == len(link):
		return true
	}
	return bytes.HasSuffix(link[:n], deletedSuffix)
}

// gone reports whether err says the process (or its descriptor) is gone.
func gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH)
}

// heldByPid is deletedOpenBytes for one process.
func heldByPid(pid int, devs map[uint64]bool, seen map[fileID]bool, link, buf []byte) (int64, error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	w := walker{buf: buf}
	names, err := w.names(fd)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, name := range names {
		if !mayBeDeleted(fd, name, link) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, 0) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink > 0 || !devs[st.Dev] {
			continue
		}
		id := fileID{st.Dev, st.Ino}
		if !seen[id] {
			seen[id] = true
			total += statBytes(&st)
		}
	}
	return total, nil
}
