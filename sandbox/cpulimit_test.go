package sandbox

import (
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestTreeCPULimit: the CPU-time limit (timeout × cpus + 1 s) holds for the
// whole experiment, not per process: three busy processes with a 6 s
// timeout (limit 7 s of CPU) use it up in about 3.5 s on two cores and end
// `limit_exceeded: cpu_time` before the wall limit. With RLIMIT_CPU alone
// each process could use 7 s and the run ended at the wall limit.
func TestTreeCPULimit(t *testing.T) {
	requireRoot(t)
	if runtime.NumCPU() < 2 {
		t.Skip("needs two cores: one busy process can only reach the limit after the wall limit")
	}
	busy := "for i in 1 2 3; do perl -e '1 while 1' & done; wait"
	for _, bc := range backendCases {
		if bc.name == "bubblewrap-nobody" {
			continue // the same tree as bubblewrap-root
		}
		t.Run(bc.name, func(t *testing.T) {
			requireTwoFreeCores(t)
			e := experiment{backend: bc.backend, asNobody: bc.asNobody, command: []string{"sh", "-c", busy}, timeout: 6 * time.Second}
			res, _, err := e.run(t)
			if err != nil {
				t.Fatal(err)
			}
			if res.LimitExceeded != LimitCPUTime || res.TimedOut {
				requireTwoFreeCores(t) // the host may have become busy during the run
				t.Errorf("limit %q, timed out %v, wall %.2f s; want cpu_time before the 6 s wall limit", res.LimitExceeded, res.TimedOut, res.WallSeconds)
			}
		})
	}
}

// TestExitStatusIsNotALimit: an experiment that exits with 137, 152 or 153
// (what a shell reports for SIGKILL, SIGXCPU, SIGXFSZ) names no limit.
// Under Bubblewrap and PRoot the status is read as that signal (bwrap
// reports a signal n as 128 + n), but a limit needs evidence: CPU used up
// to RLIMIT_CPU's whole second, or a file over the limit.
func TestExitStatusIsNotALimit(t *testing.T) {
	requireRoot(t)
	for _, code := range []int{137, 152, 153} {
		for _, bc := range backendCases {
			t.Run(strconv.Itoa(code)+"/"+bc.name, func(t *testing.T) {
				e := experiment{backend: bc.backend, asNobody: bc.asNobody,
					command: []string{"python3", "-c", "import sys; sys.exit(" + strconv.Itoa(code) + ")"}}
				res, _, err := e.run(t)
				if err != nil {
					t.Fatal(err)
				}
				if res.LimitExceeded != "" {
					t.Errorf("exit %d: limit %q (signal %v, rc %v)", code, res.LimitExceeded, ptrValue(res.Signal), ptrValue(res.ReturnCode))
				}
			})
		}
	}
}

// requireTwoFreeCores skips the test when two busy threads of this process
// get less than 1.4 cores over 300 ms: three busy processes could then not
// use their 7 s of CPU before the 6 s wall limit, and the test would
// measure the host's load, not the limit.
func requireTwoFreeCores(t *testing.T) {
	t.Helper()
	if got := cpuCapacity(2, 300*time.Millisecond); got < 1.4 {
		t.Skipf("the host is busy: two busy threads got %.2f cores (need 1.4 to reach the CPU limit before the wall limit)", got)
	}
}

// cpuCapacity is how many cores n busy goroutines got over d (this
// process's CPU time over the wall time).
func cpuCapacity(n int, d time.Duration) float64 {
	before := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for time.Since(start) < d {
			}
		})
	}
	wg.Wait()
	return (processCPU() - before).Seconds() / time.Since(start).Seconds()
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
