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
)

// MaxProcesses caps the processes (and threads) of one experiment where the
// cgroup v1 pids controller is writable, so a fork bomb cannot exhaust the
// host's process table before the watchdog kills it.
const MaxProcesses = 4096

// ContainmentPids is reported when the sampled watchdog is backed by a
// cgroup v1 pids controller (a process cap and a kill list that catches
// processes which left the tree).
const ContainmentPids = "sampled-watchdog+pids-cgroup"

const pidsRoot = "/sys/fs/cgroup/pids"

// pidsCgroup is one run's cgroup in the v1 pids hierarchy; nil when absent
// or not writable (every method is then a no-op).
type pidsCgroup struct{ dir string }

func newPidsCgroup(limit int) *pidsCgroup {
	own, err := ownV1Cgroup("pids")
	if err != nil {
		return nil
	}
	parent := filepath.Join(pidsRoot, own)
	removeStalePids(parent)
	dir := filepath.Join(parent, fmt.Sprintf("simjecture-run-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	p := &pidsCgroup{dir: dir}
	if os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(limit)), 0) != nil {
		p.remove()
		return nil
	}
	return p
}

// ownV1Cgroup is this process's path in a cgroup v1 hierarchy.
func ownV1Cgroup(controller string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && parts[1] == controller {
			return parts[2], nil
		}
	}
	return "", fmt.Errorf("no cgroup v1 %s hierarchy", controller)
}

// removeStalePids removes empty run cgroups whose helper is gone (a helper
// killed with SIGKILL cannot remove its own).
func removeStalePids(parent string) {
	names, err := filepath.Glob(filepath.Join(parent, "simjecture-run-*"))
	if err != nil {
		return
	}
	for _, dir := range names {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "simjecture-run-"))
		if err == nil && syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.Remove(dir)
		}
	}
}

func (p *pidsCgroup) kind(base string) string {
	if p == nil {
		return base
	}
	return ContainmentPids
}

// add moves pid (the target, still behind its start barrier) into the cgroup.
func (p *pidsCgroup) add(pid int) error {
	if p == nil {
		return nil
	}
	if err := os.WriteFile(filepath.Join(p.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("pids cgroup: %w", err)
	}
	return nil
}

// kill SIGKILLs every process in the cgroup and reports how many it found.
func (p *pidsCgroup) kill() int {
	if p == nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(p.dir, "cgroup.procs"))
	if err != nil {
		return 0
	}
	n := 0
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}

func (p *pidsCgroup) remove() {
	if p == nil {
		return
	}
	p.kill()
	_ = os.Remove(p.dir)
}
