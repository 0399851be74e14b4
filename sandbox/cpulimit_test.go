package sandbox

import (
	"runtime"
	"strconv"
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
			e := experiment{backend: bc.backend, asNobody: bc.asNobody, command: []string{"sh", "-c", busy}, timeout: 6 * time.Second}
			res, _, err := e.run(t)
			if err != nil {
				t.Fatal(err)
			}
			if res.LimitExceeded != LimitCPUTime || res.TimedOut {
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
