package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWorkerKillLeavesNoSSH: kill -9 of a supervisor whose study runs on an
// SSH worker, once its connection exists, leaves no ssh process of it (no
// master forked into the background either) and no sshd session of its
// login 2 s later; a resume re-attaches the experiment, which succeeds on
// the worker, and verify passes.
func TestWorkerKillLeavesNoSSH(t *testing.T) {
	t.Parallel()
	w := startWorkerStudy(t, "busy", 8, nil, "lo")
	s, c, b := w.s, w.c, w.b
	if len(sshOf(s)) == 0 {
		t.Fatal("no ssh process of the study connected to the worker's sshd")
	}
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	b.wait(t, 10*time.Second)
	var left []int
	t.Cleanup(func() {
		if t.Failed() && len(left) > 0 {
			t.Logf("left: %s", describe(left))
		}
	})
	waitFor(t, 2*time.Second, "no ssh process of the killed supervisor and no sshd session of its login", func() bool {
		left = append(sshOf(s), procsWith("sshd: "+s.login)...)
		return len(left) == 0
	})
	resumeReattaches(t, s, c)
	if r := sj(t, "", "verify", "--campaign", c.dir); r.code != 0 {
		t.Errorf("verify after the resume: %s", r)
	}
}

// TestWorkerKillSparesOtherStudy: two supervisors on one worker each own
// their connection: kill -9 of one ends its ssh processes and none of the
// other's, whose experiment ends succeeded on the worker.
func TestWorkerKillSparesOtherStudy(t *testing.T) {
	t.Parallel()
	w := startWorkerStudy(t, "busy", 60, nil, "lo")
	s := w.s
	other := newCampaign(t, "busy", "e2e-seconds: 8")
	reapMarker(t, other.marker)
	ob := startEnv(t, s.env(), other.args(300, 120, "--worker", "lo")...)
	waitFor(t, 30*time.Second, "the other study's experiment to run on the worker", func() bool { return len(procsWith(other.marker)) > 0 })
	kept := sshOfProcess(ob.cmd.Process.Pid)
	if len(kept) == 0 {
		t.Fatal("no ssh process of the other study found")
	}
	_ = w.b.cmd.Process.Signal(syscall.SIGKILL)
	w.b.wait(t, 10*time.Second)
	waitFor(t, 2*time.Second, "no ssh process of the killed supervisor", func() bool { return len(sshOfProcess(w.b.cmd.Process.Pid)) == 0 })
	for _, pid := range kept {
		if syscall.Kill(pid, 0) != nil {
			t.Errorf("ssh %d of the other study ended with the killed supervisor", pid)
		}
	}
	waitFor(t, 60*time.Second, "the other study's experiment to finish", func() bool {
		e, ok := firstByKey(status(t, other.dir), "run-0")
		return ok && e.Status != "running"
	})
	if e, _ := firstByKey(status(t, other.dir), "run-0"); e.Status != "succeeded" || e.Machine != "lo" {
		t.Errorf("the other study's experiment ended %s on %q (%s), want succeeded on lo", e.Status, e.Machine, e.Error)
	}
	stopStudy(t, s, other, ob)
}

// sshOfProcess are the ssh processes on the control socket of process pid.
func sshOfProcess(pid int) []int {
	var out []int
	for _, p := range procsWith(fmt.Sprintf("/simjecture-ssh-%d/%d-", os.Geteuid(), pid)) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); filepath.Base(exe) == "ssh" {
			out = append(out, p)
		}
	}
	return out
}

// sshOf are this host's ssh processes of the test's sshd: those naming its
// client key, and those holding a TCP connection to its port (a master
// forked into the background has rewritten its command line).
func sshOf(s *sshd) []int {
	socks := tcpTo(s.port)
	var out []int
	for _, pid := range allPids() {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); filepath.Base(exe) != "ssh" {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), s.key) || holdsSocket(pid, socks) {
			out = append(out, pid)
		}
	}
	return out
}

// tcpTo is the socket inodes of TCP connections to 127.0.0.1:port.
func tcpTo(port int) map[string]bool {
	out := map[string]bool{}
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return out
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 9 && strings.HasSuffix(fields[2], want) {
			out["socket:["+fields[9]+"]"] = true
		}
	}
	return out
}

// holdsSocket reports whether pid has one of socks open.
func holdsSocket(pid int, socks map[string]bool) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, _ := os.ReadDir(dir)
	for _, fd := range fds {
		if l, _ := os.Readlink(filepath.Join(dir, fd.Name())); socks[l] {
			return true
		}
	}
	return false
}

// allPids is every process id in /proc.
func allPids() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
