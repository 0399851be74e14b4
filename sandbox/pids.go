package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// MaxProcesses caps the processes (and threads) of one study — its
// supervisor, agents and experiments — where the cgroup v1 pids controller
// is writable, so a fork bomb cannot exhaust the host's process table before
// the watchdog kills it.
const MaxProcesses = 8192

// ContainmentPids is added to a containment without a memory cgroup when
// the study's pids cgroup caps the run's processes too.
const ContainmentPids = "+pids-cgroup"

// containment names what holds a run: its cgroup v2 (see cgroup.kind),
// and the study's pids cgroup where no memory cgroup applies.
func containment(cg *cgroup, pids bool) string {
	k := cg.kind()
	if pids && k != ContainmentCgroup {
		k += ContainmentPids
	}
	return k
}

const (
	pidsRoot     = "/sys/fs/cgroup/pids"
	studyCgroups = "simjecture-study-"
)

// LimitProcesses moves the calling process into a new cgroup of the v1 pids
// hierarchy with pids.max = limit; every process it starts afterwards
// inherits it at fork, with no per-experiment cost (moving a process between
// v1 cgroups waits for an RCU grace period, milliseconds, so it is done once
// per study, not once per experiment). It returns an error where the
// hierarchy is absent or not writable (an unprivileged account); the study
// then relies on the watchdog alone.
func LimitProcesses(limit int) error {
	own, err := ownCgroupOf("pids")
	if err != nil {
		return err
	}
	if strings.HasPrefix(filepath.Base(own), studyCgroups) {
		return nil // already inside a study's cgroup
	}
	parent := filepath.Join(pidsRoot, own)
	removeStale(parent, studyCgroups)
	dir := filepath.Join(parent, studyCgroups+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return fmt.Errorf("pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(limit)), 0); err != nil {
		_ = os.Remove(dir)
		return fmt.Errorf("pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		_ = os.Remove(dir)
		return fmt.Errorf("pids cgroup: %w", err)
	}
	reserveThreads(threadReserve) // the cap is shared with the experiments
	return nil
}

// inStudyPidsCgroup reports whether this process runs inside a study's pids cgroup.
func inStudyPidsCgroup() bool {
	own, err := ownCgroupOf("pids")
	return err == nil && strings.HasPrefix(filepath.Base(own), studyCgroups)
}

// removeStale removes the empty cgroups in parent named prefix+PID[-…]
// whose process PID is gone (a study's supervisor, a runner that was
// killed). A process cannot remove the cgroup it still lives in, nor can
// anyone remove one that still holds processes.
func removeStale(parent, prefix string) {
	names, err := filepath.Glob(filepath.Join(parent, prefix+"*"))
	if err != nil {
		return
	}
	for _, dir := range names {
		rest := strings.TrimPrefix(filepath.Base(dir), prefix)
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err == nil && pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.Remove(dir)
		}
	}
}
