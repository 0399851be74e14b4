package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// forkPy is a Python experiment whose parent touches 150 MiB and forks
// three children that stay one second; each child touches own MiB of its
// own first.
func forkPy(own int) string {
	return fmt.Sprintf(`import os, time
b = b'x' * (150 << 20)
kids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        c = b'y' * (%d << 20)
        time.sleep(1)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
`, own)
}

// TestMemoryCountsSharedPagesOnce: pages a forked child shares with its
// parent copy-on-write are one page of memory, not one per process. A tree
// whose children only inherit the parent's 150 MiB holds ≈ 160 MiB and runs
// to its end under a 512 MiB limit (the RSS sum, ≈ 630 MiB, used to kill
// it); a tree whose children each touch 150 MiB of their own holds ≈ 600
// MiB and is still killed.
func TestMemoryCountsSharedPagesOnce(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name     string
		own      int // MiB each child touches of its own
		limit    string
		min, max int64 // the peak's bounds when the run succeeds
	}{
		{"shared", 0, "", 140 << 20, 300 << 20},
		{"own", 150, LimitMemory, 0, 0},
	}
	for _, c := range cases {
		for _, bc := range backendCases {
			t.Run(c.name+"/"+bc.name, func(t *testing.T) {
				e := experiment{backend: bc.backend, asNobody: bc.asNobody, memory: 512 << 20,
					timeout: 20 * time.Second, command: []string{"python3", "-c", forkPy(c.own)}}
				res, _, err := e.run(t)
				if err != nil {
					t.Fatal(err)
				}
				p := res.PeakRSSBytes
				t.Logf("limit=%q peak=%v rc=%v wall=%.2fs", res.LimitExceeded, ptrValue(p), ptrValue(res.ReturnCode), res.WallSeconds)
				if res.LimitExceeded != c.limit {
					t.Fatalf("limit %q, want %q (peak %v, stderr %q)", res.LimitExceeded, c.limit, ptrValue(p), res.StderrTail)
				}
				if c.limit != "" {
					return
				}
				if res.ReturnCode == nil || *res.ReturnCode != 0 || p == nil || *p < c.min || *p > c.max {
					t.Fatalf("rc %v peak %v, want 0 and %d–%d bytes (stderr %q)", ptrValue(res.ReturnCode), ptrValue(p), c.min, c.max, res.StderrTail)
				}
			})
		}
	}
}

func TestParsePss(t *testing.T) {
	rollup := "55bcbbec3000-7ffc09acf000 ---p 00000000 00:00 0   [rollup]\n" +
		"Rss:                1672 kB\nPss:                 427 kB\nPss_Dirty:           112 kB\n"
	cases := []struct {
		name string
		in   string
		want int64
		err  bool
	}{
		{"rollup", rollup, 427 << 10, false},
		{"no pss line", "x [rollup]\nRss: 1 kB\nPss_Dirty: 3 kB\n", 0, true},
		{"not a number", "x [rollup]\nPss: many kB\n", 0, true},
		{"empty", "", 0, true},
	}
	for _, c := range cases {
		got, err := parsePss([]byte(c.in))
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: %d, %v; want %d (error %v)", c.name, got, err, c.want, c.err)
		}
	}
}

// TestWatchdogPSSReading: a tree of several processes is measured by its
// PSS, read again only when the tree changed (not in the steady state); a
// lone process keeps its resident set; a process gone counts 0.
func TestWatchdogPSSReading(t *testing.T) {
	cases := []struct {
		name   string
		script string
		procs  int
		comm   string // the target's, once it runs
	}{
		{"tree", "sleep 1000 & sleep 1000 & wait", 3, "sh"},
		{"alone", "exec sleep 1000", 1, "sleep"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := sampledTree(t, c.script, c.procs, c.comm)
			w.sample(false) // at the launch: no peak, no PSS reading
			if w.pss != nil || w.rep.PeakRSS != 0 {
				t.Fatalf("the launch sample read %+v, peak %d", w.pss, w.rep.PeakRSS)
			}
			w.sample(false)
			first := w.pss
			if c.procs == 1 {
				if first != nil || w.rep.PeakRSS <= 0 {
					t.Fatalf("lone process: reading %+v, peak %d", first, w.rep.PeakRSS)
				}
				return
			}
			if first == nil || first.pss <= 0 || first.pss >= first.at.rss || w.rep.PeakRSS != first.pss {
				t.Fatalf("reading %+v, peak %d: want 0 < pss < the resident sum, and the peak", first, w.rep.PeakRSS)
			}
			// The children may still be finishing their start (faulting
			// pages in): a reading is taken again while the tree changes,
			// and must stop once it does not.
			steady := false
			for deadline := time.Now().Add(5 * time.Second); !steady && time.Now().Before(deadline); {
				before := w.pss
				w.sample(false)
				steady = w.pss == before && w.lastRSS == before.pss
			}
			if !steady {
				t.Errorf("the quiet tree's PSS was read again at every sample for 5 s: %+v after %+v (last %d)", w.pss, first, w.lastRSS)
			}
			gone, err := w.files.treePSS([]int{1 << 30})
			if gone != 0 || err != nil {
				t.Errorf("a gone process counts %d, %v; want 0", gone, err)
			}
		})
	}
}

func commOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// sampledTree starts sh -c script, waits until it has procs processes and
// runs comm (its children sleep), and returns a watchdog over it; the tree is killed when the
// test ends.
func sampledTree(t testing.TB, script string, procs int, comm string) *watchdog {
	c := exec.Command("sh", "-c", script)
	startTree(t, c)
	waitFor(t, "the tree", 10*time.Second, func() bool {
		kids := descendants(c.Process.Pid)
		for _, pid := range kids {
			if commOf(pid) != "sleep" {
				return false
			}
		}
		return commOf(c.Process.Pid) == comm && 1+len(kids) >= procs
	})
	srv := newServer(os.Getppid())
	// The test process's other children (runners of earlier tests) are no
	// orphans of this tree: the server sees none.
	empty, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	must(t, err)
	t.Cleanup(func() { _ = unix.Close(empty) })
	srv.kidsFile = func() (int, error) { return empty, nil }
	w := newWatchdog(helperConfig{}, srv, 1)
	w.target = c.Process.Pid
	t.Cleanup(w.files.close)
	return w
}

// BenchmarkTreePSS measures one PSS reading over BenchmarkWatchdogSample's
// tree of 100 processes: what a sample at a new high or over the limit adds.
func BenchmarkTreePSS(b *testing.B) {
	w := sampledTree(b, "for i in $(seq 99); do sleep 1000 & done; wait", 100, "sh")
	w.sample(false)
	pids := append(w.roots(), descendants(w.target)...)
	before := cpuTime()
	for b.Loop() {
		if _, err := w.files.treePSS(pids); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/reading")
}
