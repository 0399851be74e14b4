package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Containment values reported in Result.Containment.
const (
	// ContainmentCgroup: a cgroup v2 of the run's own holds its processes,
	// caps their memory (memory.max) and kills them all (cgroup.kill).
	ContainmentCgroup = "cgroup"
	// ContainmentSampled: the sampled watchdog alone.
	ContainmentSampled = "sampled-watchdog"
	// ContainmentCgroupKill: the watchdog caps memory; a cgroup v2 of the
	// run's own holds its processes and kills them all (no memory
	// controller in the unified hierarchy, as on hybrid cgroup hosts).
	ContainmentCgroupKill = "sampled-watchdog+cgroup-kill"
)

// cgroupRoots are where a cgroup v2 (unified) hierarchy is looked for: the
// whole of /sys/fs/cgroup, or its unified part on a hybrid v1/v2 host.
var cgroupRoots = []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}

// runCgroups starts the name of a run's cgroup: runCgroups + runner pid - run id.
const runCgroups = "simjecture-run-"

// cgroup is a private cgroup v2 for one run, used where the unified
// hierarchy is writable by us. A nil *cgroup means "not available": every
// method is then a no-op and the sampled watchdog is the only guarantee.
type cgroup struct {
	dir     string
	fd      int
	memory  bool // memory.max is set
	canKill bool // it has cgroup.kill (Linux 5.14)
}

// cgroupSetup is what a runner learns once, at its start, about the
// cgroups it lives in (a runner is never moved between cgroups).
type cgroupSetup struct {
	v2Dir string // our own cgroup v2 folder; "" where cgroup v2 is absent
	pids  bool   // we live in a study's v1 pids cgroup (see LimitProcesses)
}

func probeCgroups() cgroupSetup {
	s := cgroupSetup{v2Dir: ownV2Dir(), pids: inStudyPidsCgroup()}
	if s.v2Dir != "" && unix.Access(s.v2Dir, unix.W_OK|unix.X_OK) != nil {
		// Not ours to write (uid 65534 here): every run's mkdir there
		// failed on its launch path (15–30 µs), once for the run and once
		// for the spare.
		s.v2Dir = ""
	}
	if s.v2Dir != "" {
		removeStale(s.v2Dir, runCgroups) // those of runners killed with their host
	}
	return s
}

// ownV2Dir is our own folder in the cgroup v2 hierarchy, or "".
func ownV2Dir() string {
	for _, root := range cgroupRoots {
		if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
			continue
		}
		if own, err := ownCgroup(); err == nil {
			return filepath.Join(root, own)
		}
		return ""
	}
	return ""
}

// removeRunnerCgroups removes the run cgroups of a runner that died, once
// the processes killed in them have left. Its host calls it (the runner
// starts in its host's cgroup, so they share the parent).
func removeRunnerCgroups(runner int) {
	dir := ownV2Dir()
	if dir == "" {
		return
	}
	left, _ := filepath.Glob(filepath.Join(dir, runCgroups+strconv.Itoa(runner)+"-*"))
	for _, d := range left {
		(&cgroup{dir: d, fd: -1}).remove()
	}
}

// newCgroup creates a child of our own cgroup v2 folder parent, with
// memory.max set where the memory controller is enabled there, or returns
// nil when there is no such folder or it is not writable (cgroup v1 only,
// no delegation to an unprivileged account). tag makes the name unique
// among the runs of one runner.
func newCgroup(parent string, memory int64, tag uint64) *cgroup {
	if parent == "" {
		return nil
	}
	return makeCgroup(filepath.Join(parent, runCgroupName(tag))).limit(memory)
}

// writeCgroupFile writes an existing cgroup interface file (never creates one).
func writeCgroupFile(p string, v []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(v)
	return errors.Join(err, f.Close())
}

func ownCgroup() (string, error) { return ownCgroupOf("") }

// ownCgroupOf is this process's path in the hierarchy whose controller list
// in /proc/self/cgroup is controllers: "" for cgroup v2 ("0::path"), or a
// v1 controller such as "pids".
func ownCgroupOf(controllers string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && parts[1] == controllers {
			return parts[2], nil
		}
	}
	return "", fmt.Errorf("no cgroup entry for %q", controllers)
}

func (c *cgroup) kind() string {
	switch {
	case c == nil:
		return ContainmentSampled
	case c.memory:
		return ContainmentCgroup
	default:
		return ContainmentCgroupKill
	}
}

// attach makes the target start inside the cgroup (clone3 CLONE_INTO_CGROUP).
func (c *cgroup) attach(sys *syscall.SysProcAttr) {
	if c != nil {
		sys.UseCgroupFD, sys.CgroupFD = true, c.fd
	}
}

// kill kills every process in the cgroup at once.
func (c *cgroup) kill() {
	if c != nil {
		_ = writeCgroupFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"))
	}
}

// oomKilled reports whether the kernel's memory.max fired.
func (c *cgroup) oomKilled() bool {
	if c == nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "memory.events"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "oom_kill "); ok && n != "0" {
			return true
		}
	}
	return false
}

// remove kills what is left in the cgroup and removes it. Killed processes
// leave it within moments (zombies do not hold it), so an rmdir that finds
// it still populated is retried for up to about a second.
func (c *cgroup) remove() {
	if c == nil {
		return
	}
	c.kill()
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
	for i := 0; i < 200; i++ {
		err := os.Remove(c.dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
