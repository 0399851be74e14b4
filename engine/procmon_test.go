package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeProc writes a /proc tree: pid → (ppid, cmdline, utime).
type fakeProc struct {
	t   *testing.T
	dir string
}

func newFakeProc(t *testing.T) *fakeProc {
	t.Helper()
	f := &fakeProc{t: t, dir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(f.dir, "uptime"), []byte("1000.00 1900.00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fakeProc) put(pid, ppid int, cmdline string, ticks, rssPages int) {
	f.t.Helper()
	d := filepath.Join(f.dir, fmt.Sprint(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		f.t.Fatal(err)
	}
	comm := strings.Fields(cmdline + " x")[0]
	// Fields 3..24: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	// utime stime cutime cstime priority nice threads itrealvalue starttime vsize rss.
	stat := fmt.Sprintf("%d (%s) S %d 1 1 0 -1 0 0 0 0 0 %d 0 0 0 20 0 1 0 50000 1000 %d\n", pid, comm, ppid, ticks, rssPages)
	if err := os.WriteFile(filepath.Join(d, "stat"), []byte(stat), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "cmdline"), []byte(strings.ReplaceAll(cmdline, " ", "\x00")+"\x00"), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) kill(pid int) {
	f.t.Helper()
	if err := os.RemoveAll(filepath.Join(f.dir, fmt.Sprint(pid))); err != nil {
		f.t.Fatal(err)
	}
}

func TestProcMonitorTreeRolesAndCPU(t *testing.T) {
	t.Parallel()
	p := newFakeProc(t)
	p.put(100, 1, "simjecture study --campaign /c", 10, 100)
	p.put(101, 100, "python3 agent.py", 5, 200)
	p.put(102, 101, "simjecture lab run", 0, 50)
	p.put(103, 100, "simjecture __sandbox-runner --dir /c/supervisor/run/exp_abc/work -- proot", 0, 10)
	p.put(104, 103, "proot -r / sleep 60", 0, 20)
	p.put(200, 1, "unrelated", 0, 1)
	now := time.Unix(1000, 0)
	m := &ProcMonitor{Proc: p.dir, Now: func() time.Time { return now }}
	first, err := m.Sample([]int{100}, "proot-cooperative")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range first {
		got = append(got, fmt.Sprintf("%d:%d:%s:%s:%s:%s", s.PID, s.Depth, s.Role, s.Experiment, s.Backend, s.Launcher))
	}
	want := "100:0:supervisor::host: 101:1:agent::host: 102:2:agent::host: 103:1:experiment:exp_abc:proot-cooperative:runner 104:2:experiment:exp_abc:proot-cooperative:proot"
	if strings.Join(got, " ") != want {
		t.Fatalf("tree:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if first[0].Elapsed != 500*time.Second {
		t.Errorf("elapsed = %v, want 500s (uptime 1000 s, started at tick 50000)", first[0].Elapsed)
	}
	if first[0].RSSBytes != 100*int64(os.Getpagesize()) {
		t.Errorf("rss = %d", first[0].RSSBytes)
	}
	now = now.Add(time.Second)
	p.put(101, 100, "python3 agent.py", 55, 300) // 50 ticks in 1 s = 50 %
	second, _ := m.Sample([]int{100}, "proot-cooperative")
	if second[1].CPUPercent != 50 {
		t.Errorf("cpu = %v, want 50", second[1].CPUPercent)
	}
	if h := second[1].RSSHistory; len(h) != 2 || h[1] != 300*int64(os.Getpagesize()) {
		t.Errorf("history = %v", h)
	}
	if h := second[1].CPUHistory; len(h) != 2 || h[0] != 0 || h[1] != 50 {
		t.Errorf("cpu history = %v, want [0 50]", h)
	}
}

func TestProcMonitorBoundsHistoryAndForgetsDeadPIDs(t *testing.T) {
	t.Parallel()
	p := newFakeProc(t)
	p.put(10, 1, "sup", 0, 1)
	p.put(11, 10, "agent", 0, 1)
	m := &ProcMonitor{Proc: p.dir}
	var last []ProcSample
	for i := range ProcHistory + 10 {
		p.put(11, 10, "agent", 0, i+1)
		last, _ = m.Sample([]int{10}, "bubblewrap")
	}
	if n, c := len(last[1].RSSHistory), len(last[1].CPUHistory); n != ProcHistory || c != ProcHistory {
		t.Fatalf("history holds %d memory and %d cpu samples, want %d", n, c, ProcHistory)
	}
	if got := last[1].RSSHistory[ProcHistory-1]; got != int64(ProcHistory+10)*int64(os.Getpagesize()) {
		t.Errorf("newest sample = %d", got)
	}
	p.kill(11)
	last, _ = m.Sample([]int{10}, "bubblewrap")
	if len(last) != 1 || m.Tracked() != 1 {
		t.Errorf("after pid 11 died: %d rows, %d tracked; want 1 and 1", len(last), m.Tracked())
	}
}

func TestProcMonitorRealChild(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	m := NewProcMonitor()
	// Sampled until the child has finished its exec (before that it has
	// no command line and no resident memory yet), for up to 10 s.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var last ProcSample
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); <-tick.C {
		rows, err := m.Sample([]int{os.Getpid()}, "bubblewrap")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.PID == cmd.Process.Pid {
				last = r
			}
		}
		if last.Role == RoleAgent && strings.HasPrefix(last.Command, "sleep 30") && last.RSSBytes > 0 {
			return
		}
	}
	t.Fatalf("child %d: last row %+v; want an agent row for sleep 30 with resident memory", cmd.Process.Pid, last)
}

// TestProcMonitorSharedRunner attributes each child of the shared sandbox
// runner (`__sandbox-runner --serve`) to its own experiment.
func TestProcMonitorSharedRunner(t *testing.T) {
	t.Parallel()
	p := newFakeProc(t)
	p.put(100, 1, "simjecture study --campaign /c", 10, 100)
	p.put(110, 100, "simjecture __sandbox-runner --serve --parent-pid 100", 0, 10)
	p.put(111, 110, "bwrap --bind /c/supervisor/run/exp_one/work /work sh", 0, 10)
	p.put(112, 111, "python3 sim.py", 0, 10)
	p.put(113, 110, "bwrap --bind /c/supervisor/run/exp_two/work /work sh", 0, 10)
	m := &ProcMonitor{Proc: p.dir, Now: func() time.Time { return time.Unix(1000, 0) }}
	rows, err := m.Sample([]int{100}, "bubblewrap")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range rows {
		got = append(got, fmt.Sprintf("%d:%s:%s", s.PID, s.Role, s.Experiment))
	}
	want := "100:supervisor: 110:experiment: 111:experiment:exp_one 112:experiment:exp_one 113:experiment:exp_two"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}
