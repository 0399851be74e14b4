package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// Settling the receipts a dead supervisor left running: whoever holds the
// campaign lock next (a supervisor starting, or a pause or cancel applied
// without one) records them, so that no receipt says running in a study no
// process supervises.

// reasonSupervisorStopped is the error of a receipt whose supervisor
// stopped while it ran.
const reasonSupervisorStopped = "the supervisor stopped while it ran"

// settleRunning records every experiment still running as status (interrupted
// or cancelled) with reason, and its event: experiment_interrupted for an
// interrupted one, experiment_finished otherwise. The caller holds the
// campaign lock, so no supervisor, and so no sandbox runner, runs them.
func settleRunning(tx *store.Tx, status ExpStatus, reason string) error {
	return settleRunningWhere(tx, status, reason, func(Receipt) bool { return true })
}

// onThisHost reports whether r ran on this host rather than on a worker.
func onThisHost(r Receipt) bool { return r.Remote == nil }

// settleRunningWhere is settleRunning for the running receipts that match.
func settleRunningWhere(tx *store.Tx, status ExpStatus, reason string, match func(Receipt) bool) error {
	running, err := listDocs[Receipt](tx, store.Experiments, string(ExpRunning))
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	for _, r := range running {
		if !match(r) {
			continue
		}
		r.Status, r.FinishedAt, r.Error = status, &now, reason
		if _, err := putReceipt(tx, r); err != nil {
			return err
		}
		if err := appendSettled(tx, r.ID, status); err != nil {
			return err
		}
	}
	return nil
}

func appendSettled(tx *store.Tx, id string, status ExpStatus) error {
	if status == ExpInterrupted {
		return appendEvent(tx, ExperimentInterruptedPayload{Experiment: id})
	}
	return appendEvent(tx, ExperimentFinishedPayload{Experiment: id, Status: status})
}

// runGrace is how long killOrphanRuns waits for the processes it killed.
const runGrace = 2 * time.Second

// killOrphanRuns makes sure no experiment of the campaign still runs when
// no supervisor does: the sandbox runner kills every run's tree when its
// supervisor dies, but it may still be at it. Receipts carry no pid, so
// the processes are found by the campaign's private run folders: a
// launcher names its run folder in its arguments (bwrap's binds), and a
// cooperative run works in it. Those still alive are killed; an error
// names the ones that outlive runGrace.
func killOrphanRuns(c Campaign) error {
	scratch := c.Scratch() + string(filepath.Separator)
	deadline := time.Now().Add(runGrace)
	for {
		left := runProcesses("/proc", scratch)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("experiment processes %v of %s outlived their supervisor", left, c.Dir)
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runProcesses lists the live processes in proc whose command line names a
// path under scratch or whose working folder is under it.
func runProcesses(proc, scratch string) []int {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join(proc, e.Name())
		if inScratch(dir, scratch) && alive(dir) {
			out = append(out, pid)
		}
	}
	return out
}

func inScratch(dir, scratch string) bool {
	if cmd, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil && strings.Contains(string(cmd), scratch) {
		return true
	}
	cwd, err := os.Readlink(filepath.Join(dir, "cwd"))
	return err == nil && strings.HasPrefix(cwd+string(filepath.Separator), scratch)
}

// alive reports whether the process is neither a zombie nor dead.
func alive(dir string) bool {
	raw, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return false
	}
	st, err := sandbox.ParseProcStat(raw)
	return err == nil && st.State != 'Z' && st.State != 'X'
}
