package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Under Bubblewrap the experiment's /dev/shm is a tmpfs of its own, capped
// at the run's memory limit (bwrapArgv). Its pages are memory that no RSS
// or PSS sample shows while no process maps them, and no cgroup holds them
// where there is no memory controller; so the watchdog adds what the tmpfs
// holds beyond what the tree maps of it (RssShmem, already in its RSS) to
// the memory measure. Filling the tmpfs is then a memory breach, and
// writing past its cap fails inside the experiment with ENOSPC.

// shmWatch measures the experiment's /dev/shm, found through the root of
// a process of the tree (not the launcher, which stays in the host's mount
// namespace) and held open with O_PATH.
type shmWatch struct {
	views    [3]int    // the experiment's viewMounts once found, views[0] its /dev/shm; -1 before
	hostDevs [3]uint64 // the host's own mounts there, which are never the experiment's (read at the first findViews)
	devsRead bool
}

func newShmWatch() shmWatch {
	return shmWatch{views: [3]int{-1, -1, -1}}
}

// used is the bytes the experiment's /dev/shm holds and its size (0, 0
// until it is found).
func (s *shmWatch) used(pids []int, launcher int) (int64, int64) {
	if s.views[0] < 0 {
		s.find(pids, launcher)
	}
	var st unix.Statfs_t
	if s.views[0] < 0 || unix.Fstatfs(s.views[0], &st) != nil {
		return 0, 0
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize, int64(st.Blocks) * st.Bsize
}

// find opens the /dev/shm (and the /, /dev: viewinodes.go) of the first
// process of pids other than the launcher whose /dev/shm is a tmpfs other
// than the host's.
func (s *shmWatch) find(pids []int, launcher int) {
	for _, pid := range pids {
		if pid != launcher && s.findViews(pid) {
			return
		}
	}
}

// shmFilled records a memory breach when the experiment's /dev/shm is
// full once it has ended: the tmpfs is capped at the memory limit, so the
// run held at least that much, though it may have ended (of ENOSPC) before
// a sample saw it. The open handle keeps the tmpfs after the namespace is
// gone; its pages are freed when close releases it.
func (w *watchdog) shmFilled() {
	if !w.cfg.Shm {
		return
	}
	used, size := w.shm.used(nil, w.target)
	if size > 0 && used >= size {
		w.setLimit(LimitMemory)
		w.rep.PeakRSS = max(w.rep.PeakRSS, used)
	}
}

func (s *shmWatch) close() {
	for i, fd := range s.views {
		if fd >= 0 {
			_ = unix.Close(fd)
			s.views[i] = -1
		}
	}
}

// shmMemory is what the experiment's /dev/shm holds beyond the shared
// memory its processes map (counted in their RSS already), plus the
// inodes of its tmpfs mounts (viewinodes.go); 0 where the run has no
// /dev/shm of its own.
func (w *watchdog) shmMemory(pids []int) int64 {
	if !w.cfg.Shm {
		return 0
	}
	used, _ := w.shm.used(pids, w.target)
	inodes := w.shm.inodeMemory()
	if used == 0 {
		return inodes
	}
	return max(0, used-mappedShmem(pids)) + inodes
}

// mappedShmem sums the RssShmem of pids (/proc/PID/status): shared memory
// mapped, shared pages once per process that maps them.
func mappedShmem(pids []int) int64 {
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		_, rest, ok := bytes.Cut(b, []byte("\nRssShmem:"))
		if !ok {
			continue
		}
		line, _, _ := bytes.Cut(rest, []byte("\n"))
		kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))), 10, 64)
		if err == nil {
			sum += kb << 10
		}
	}
	return sum
}
