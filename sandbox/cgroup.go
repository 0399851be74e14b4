package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Containment values reported in Result.Containment.
const (
	ContainmentCgroup  = "cgroup"
	ContainmentSampled = "sampled-watchdog"
)

const cgroupRoot = "/sys/fs/cgroup"

// cgroup is a private cgroup v2 for one run, used when the unified hierarchy
// is delegated to us. A nil *cgroup means "not available": every method is
// then a no-op and the sampled watchdog is the only guarantee.
type cgroup struct {
	dir string
	fd  int
}

// cgroupSetup is what a runner learns once, at its start, about the
// cgroups it lives in (a runner is never moved between cgroups).
type cgroupSetup struct {
	v2Dir string // our own cgroup v2 folder; "" where cgroup v2 is absent
	pids  bool   // we live in a study's v1 pids cgroup (see LimitProcesses)
}

func probeCgroups() cgroupSetup {
	var s cgroupSetup
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		if own, err := ownCgroup(); err == nil {
			s.v2Dir = filepath.Join(cgroupRoot, own)
		}
	}
	s.pids = inStudyPidsCgroup()
	return s
}

// newCgroup creates a child of our own cgroup v2 folder parent with
// memory.max set, or returns nil when there is none or it is not writable
// (cgroup v1 hosts, no delegation). tag makes the name unique among the
// runs of one runner.
func newCgroup(parent string, memory int64, tag uint64) *cgroup {
	if parent == "" {
		return nil
	}
	dir := filepath.Join(parent, fmt.Sprintf("simjecture-run-%d-%d", os.Getpid(), tag))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	cg := &cgroup{dir: dir, fd: -1}
	if memory > 0 {
		v := []byte(strconv.FormatInt(memory, 10))
		if os.WriteFile(filepath.Join(dir, "memory.max"), v, 0) != nil {
			cg.remove()
			return nil
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		cg.remove()
		return nil
	}
	cg.fd = fd
	return cg
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
	if c == nil {
		return ContainmentSampled
	}
	return ContainmentCgroup
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
		_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
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

func (c *cgroup) remove() {
	if c == nil {
		return
	}
	c.kill()
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
	_ = os.Remove(c.dir)
}
