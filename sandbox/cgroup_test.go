package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCgroupV2 exercises a run's cgroup v2 for real: a process started
// into it (clone3 CLONE_INTO_CGROUP), with a child that calls setsid, is
// killed whole by cgroup.kill, and the cgroup is removed. It needs a
// writable unified hierarchy (root here: /sys/fs/cgroup/unified on this
// hybrid host, /sys/fs/cgroup on a v2 one).
func TestCgroupV2(t *testing.T) {
	requireRoot(t)
	setup := probeCgroups()
	if setup.v2Dir == "" {
		t.Skip("no cgroup v2 hierarchy on this host")
	}
	cg := newCgroup(setup.v2Dir, 256<<20, 1<<20+uint64(os.Getpid()))
	if cg == nil {
		t.Fatalf("cannot create a cgroup under %s as root", setup.v2Dir)
	}
	defer cg.remove()
	if got := cg.kind(); got != ContainmentCgroup && got != ContainmentCgroupKill {
		t.Fatalf("kind %q", got)
	}
	sys := &syscall.SysProcAttr{Setsid: true}
	cg.attach(sys)
	cmd := exec.Command("sh", "-c", "setsid sleep 1000 & echo $!; wait")
	cmd.SysProcAttr = sys
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	must(t, err)
	for _, pid := range []int{cmd.Process.Pid, child} {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
		if err != nil || !strings.Contains(string(b), filepath.Base(cg.dir)) {
			t.Fatalf("process %d not in %s: %s %v", pid, cg.dir, b, err)
		}
	}
	cg.kill()
	_ = cmd.Wait() // the shell is killed
	waitFor(t, "the setsid child to be killed by cgroup.kill", 5*time.Second, func() bool {
		st, err := readStat(child)
		return err != nil || st.finished()
	})
	cg.remove()
	if _, err := os.Stat(cg.dir); !os.IsNotExist(err) {
		t.Errorf("cgroup %s not removed: %v", cg.dir, err)
	}
}

// TestRunContainment checks what a run reports: as root on a host with a
// writable unified hierarchy, its own cgroup; as nobody, the watchdog.
func TestRunContainment(t *testing.T) {
	requireRoot(t)
	want := ContainmentSampled
	if probeCgroups().v2Dir != "" {
		want = "cgroup"
	}
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			e := experiment{backend: c.backend, asNobody: c.asNobody, command: []string{"true"}}
			res, _, err := e.run(t)
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if c.asNobody {
				w = ContainmentSampled
			}
			if !strings.Contains(res.Containment, w) {
				t.Errorf("containment %q, want it to name %q", res.Containment, w)
			}
		})
	}
}
