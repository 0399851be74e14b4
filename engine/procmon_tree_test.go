package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// children writes pid's children file (its main thread's).
func (f *fakeProc) children(pid int, kids ...int) {
	f.t.Helper()
	d := filepath.Join(f.dir, fmt.Sprint(pid), "task", fmt.Sprint(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		f.t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range kids {
		fmt.Fprintf(&b, "%d ", k)
	}
	if err := os.WriteFile(filepath.Join(d, "children"), []byte(b.String()), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// TestProcMonitorWalksTheTreeByChildrenFiles: where the proc tree lists
// each thread's children, a sample reads the roots' tree through them and
// no other process (pid 200 names 100 as its parent in its stat but no
// children file lists it, so only a read of every process finds it).
func TestProcMonitorWalksTheTreeByChildrenFiles(t *testing.T) {
	t.Parallel()
	p := newFakeProc(t)
	for _, r := range []struct{ pid, ppid, ticks, rss int }{{100, 1, 10, 100}, {101, 100, 5, 200}, {102, 101, 0, 50}, {200, 100, 0, 1}} {
		p.put(r.pid, r.ppid, fmt.Sprintf("cmd-%d", r.pid), r.ticks, r.rss)
	}
	p.children(100, 101)
	p.children(101, 102)
	p.children(102)
	m := &ProcMonitor{Proc: p.dir}
	rows, err := m.Sample([]int{100}, "bubblewrap")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = fmt.Sprintf("%d %d %s", r.PID, r.Depth, r.Role)
	}
	if want := "100 0 supervisor,101 1 agent,102 2 agent"; strings.Join(got, ",") != want {
		t.Fatalf("tree: got %s, want %s", strings.Join(got, ","), want)
	}
	all, err := m.readAll()
	if err != nil || len(all) != 4 {
		t.Fatalf("a read of every process finds %d (%v), want 4: the fake is wrong", len(all), err)
	}
}

// BenchmarkProcMonitorSample reads this process's tree through the
// children files against a read of every process on the host (what a
// sample cost before), alternately in the same run, and reports the ratio.
func BenchmarkProcMonitorSample(b *testing.B) {
	m := NewProcMonitor()
	self := []int{os.Getpid()}
	if !m.hasChildren(self[0]) {
		b.Skip("this kernel lists no children files (CONFIG_PROC_CHILDREN)")
	}
	var tree, whole time.Duration
	procs := 0
	for range b.N {
		start := time.Now()
		if _, err := m.readTree(self); err != nil {
			b.Fatal(err)
		}
		tree += time.Since(start)
		start = time.Now()
		all, err := m.readAll()
		if err != nil {
			b.Fatal(err)
		}
		whole += time.Since(start)
		procs = len(all)
	}
	b.ReportMetric(float64(tree.Microseconds())/float64(b.N), "µs/tree")
	b.ReportMetric(float64(whole.Microseconds())/float64(b.N), "µs/all")
	b.ReportMetric(float64(procs), "host-procs")
	b.ReportMetric(float64(tree)/float64(whole), "ratio-tree/all")
}
