package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// A runner makes the next run's cgroup before that run asks for it: making
// one (a mkdir in the cgroup file system, a stat and an open) took 70–90 µs
// of every launch's critical path on the AMD EPYC host of session 11. The
// spare is made at the runner's start and again after each run's cgroup is
// removed, off the launch path; a run that finds none makes its own.

// cgroupSpare holds at most one cgroup made ahead of the run that takes it.
type cgroupSpare struct {
	mu    sync.Mutex
	cg    *cgroup
	seq   uint64
	taken bool // the runner stops: no more spares
}

// takeCgroup returns the cgroup for a run with memory limit memory (0: none)
// whose tag is tag: the spare when there is one, else one made now.
func (s *server) takeCgroup(memory int64, tag uint64) *cgroup {
	s.spareCg.mu.Lock()
	cg := s.spareCg.cg
	s.spareCg.cg = nil
	s.spareCg.mu.Unlock()
	if cg == nil {
		return newCgroup(s.cgroups.v2Dir, memory, tag)
	}
	return cg.limit(memory)
}

// refillCgroup makes a spare cgroup when there is none.
func (s *server) refillCgroup() {
	if s.cgroups.v2Dir == "" {
		return
	}
	s.spareCg.mu.Lock()
	if s.spareCg.cg != nil || s.spareCg.taken {
		s.spareCg.mu.Unlock()
		return
	}
	s.spareCg.seq++
	name := runCgroups + strconv.Itoa(os.Getpid()) + "-s" + strconv.FormatUint(s.spareCg.seq, 10)
	s.spareCg.mu.Unlock()
	cg := makeCgroup(filepath.Join(s.cgroups.v2Dir, name))
	if cg == nil {
		return
	}
	s.spareCg.mu.Lock()
	if s.spareCg.cg == nil && !s.spareCg.taken {
		s.spareCg.cg, cg = cg, nil
	}
	s.spareCg.mu.Unlock()
	cg.remove() // one was made meanwhile, or the runner stops (nil: nothing)
}

// dropSpareCgroup removes the spare for good (the runner stops).
func (s *server) dropSpareCgroup() {
	s.spareCg.mu.Lock()
	cg := s.spareCg.cg
	s.spareCg.cg, s.spareCg.taken = nil, true
	s.spareCg.mu.Unlock()
	cg.remove()
}

// makeCgroup makes the cgroup dir, notes whether it has cgroup.kill and
// opens it. It returns nil when dir cannot be made or opened.
func makeCgroup(dir string) *cgroup {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	cg := &cgroup{dir: dir, fd: -1}
	_, err := os.Stat(filepath.Join(dir, "cgroup.kill"))
	cg.canKill = err == nil
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		cg.remove()
		return nil
	}
	cg.fd = fd
	return cg
}

// limit sets memory.max to memory where the memory controller is enabled
// and returns cg, or removes cg and returns nil when it would add nothing
// to the watchdog (no memory limit and no cgroup.kill). A nil cg stays nil.
func (cg *cgroup) limit(memory int64) *cgroup {
	if cg == nil {
		return nil
	}
	if memory > 0 {
		v := []byte(strconv.FormatInt(memory, 10))
		cg.memory = writeCgroupFile(filepath.Join(cg.dir, "memory.max"), v) == nil
	}
	if !cg.canKill && !cg.memory {
		cg.remove() // before Linux 5.14: nothing to add to the watchdog
		return nil
	}
	return cg
}

// runCgroupName is the name of the cgroup newCgroup makes for tag.
func runCgroupName(tag uint64) string {
	return fmt.Sprintf("%s%d-%d", runCgroups, os.Getpid(), tag)
}
