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

// maxTreeFDs bounds the descriptors one slow sample reads: a readlink
// costs 2.5–4 µs (BenchmarkWatchdogSlowSample), so the tables of a
// tree that holds more take too long to read every sample, and count as
// over the limit.
var maxTreeFDs = 100_000 // a variable for the tests

// deletedSuffix ends the link target of a descriptor whose file was unlinked.
var deletedSuffix = []byte(" (deleted)")

// deletedOpenBytes sums the unlinked regular files on the devices devs that
// the processes procs (pid → start time) hold open; seen holds the inodes
// already counted and gains the ones counted here. ok is false when the
// descriptor table of a process that is still the same one could not be
// read, or the tree holds more than maxTreeFDs. (A pid may be taken by
// another account's process between the tree's sample and the read: the
// read is denied, and that process is not ours.)
func deletedOpenBytes(procs map[int]uint64, devs map[uint64]bool, seen map[fileID]bool) (total int64, ok bool) {
	h := heldScan{devs: devs, seen: seen, link: make([]byte, 4096), w: walker{buf: make([]byte, 16<<10)}}
	for pid, start := range procs {
		err := h.process(pid)
		if err != nil && !gone(err) && (errors.Is(err, errTooManyFDs) || alive(pid, start)) {
			return h.total, false
		}
	}
	return h.total, true
}

// heldScan is the state of one deletedOpenBytes.
type heldScan struct {
	devs  map[uint64]bool
	seen  map[fileID]bool
	link  []byte
	w     walker // for its getdents buffer
	fds   int    // descriptors read so far
	total int64
}

// errTooManyFDs: the tree holds more than maxTreeFDs descriptors.
var errTooManyFDs = errors.New("too many open descriptors to read every sample")

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

// process adds what process pid holds.
func (h *heldScan) process(pid int) error {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	names, err := h.w.names(fd, maxTreeFDs-h.fds)
	if h.fds += len(names); err == nil && h.fds > maxTreeFDs {
		err = errTooManyFDs
	}
	if err != nil {
		return err
	}
	for _, name := range names {
		if !mayBeDeleted(fd, name, h.link) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, 0) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink > 0 || !h.devs[st.Dev] {
			continue
		}
		if id := (fileID{st.Dev, st.Ino}); !h.seen[id] {
			h.seen[id] = true
			h.total += statBytes(&st)
		}
	}
	return nil
}
