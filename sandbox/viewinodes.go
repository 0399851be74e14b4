package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Under Bubblewrap the experiment's / and /dev are tmpfs of 1 MiB and its
// /dev/shm one capped at the memory limit (bwrapArgv), but --size bounds
// bytes, not files: every file or folder made there is an inode and a
// dentry of kernel memory that no RSS sample or limit shows (about 250 MB
// for 300,000 empty files on the AMD EPYC host of session 11). The
// watchdog counts tmpfsInodeBytes per inode used in the three as memory.

// tmpfsInodeBytes is what one inode of a tmpfs counts as memory: a shmem
// inode and its dentry take about 0.85 KiB on Linux 6.18 x86-64.
const tmpfsInodeBytes = 1 << 10

// viewMounts are the experiment's tmpfs mounts whose inodes count, below
// its root; the first ("/dev/shm") is the one shm.go measures.
var viewMounts = []string{"/dev/shm", "", "/dev"}

// findViews opens, through the root of pid, each of viewMounts that is a
// tmpfs other than the host's own mount at that path, keeping each handle
// open with O_PATH. It keeps none unless the first, /dev/shm, is found:
// while bwrap builds the sandbox the process's root is an earlier tmpfs of
// its own, and only once the experiment's /dev/shm shows through it is that
// root the experiment's. It reports whether they were found.
func (s *shmWatch) findViews(pid int) bool {
	if !s.devsRead { // three stats a run without a view of its own need not make
		s.hostDevs, s.devsRead = hostDevsOf(), true
	}
	var found [3]int
	for i, m := range viewMounts {
		found[i] = s.openView(pid, m, s.hostDevs[i])
		if i == 0 && found[0] < 0 {
			return false
		}
	}
	s.views = found
	return true
}

// openView opens m below pid's root when it is a tmpfs not on device
// host, or returns -1.
func (s *shmWatch) openView(pid int, m string, host uint64) int {
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/root%s", pid, m), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	var st unix.Stat_t
	var fs unix.Statfs_t
	if unix.Fstat(fd, &st) == nil && unix.Fstatfs(fd, &fs) == nil && fs.Type == unix.TMPFS_MAGIC && st.Dev != host {
		return fd
	}
	_ = unix.Close(fd)
	return -1
}

// inodeMemory is tmpfsInodeBytes for each inode the found mounts use.
func (s *shmWatch) inodeMemory() int64 {
	var n int64
	for _, fd := range s.views {
		var fs unix.Statfs_t
		if fd >= 0 && unix.Fstatfs(fd, &fs) == nil && fs.Files >= fs.Ffree {
			n += int64(fs.Files - fs.Ffree)
		}
	}
	return n * tmpfsInodeBytes
}

// hostDevsOf is the device of the host's own mount at each of viewMounts.
func hostDevsOf() [3]uint64 {
	var devs [3]uint64
	for i, m := range viewMounts {
		var st unix.Stat_t
		if unix.Stat(m+"/", &st) == nil {
			devs[i] = st.Dev
		}
	}
	return devs
}
