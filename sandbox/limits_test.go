package sandbox

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLimits(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name      string
		e         experiment
		limit     string
		signal    string // expected signal, "" = any
		timedOut  bool
		maxWall   float64
		backends  []Backend
		needsRoot bool
	}{
		{name: "wall time", limit: LimitWallTime, timedOut: true, maxWall: 5,
			e: experiment{command: []string{"sleep", "30"}, timeout: time.Second}},
		{name: "wall time ignoring SIGTERM", limit: LimitWallTime, timedOut: true, maxWall: 6,
			e: experiment{command: []string{"sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"}, timeout: time.Second}},
		{name: "cpu time", limit: LimitCPUTime, signal: "SIGXCPU", maxWall: 9,
			// the soft limit is lowered inside so that a busy loop reaches it
			// before the wall limit even on a loaded host; TestLimitsApplied
			// checks the values Run sets
			e: experiment{command: []string{"sh", "-c", "ulimit -S -t 1; exec perl -e '1 while 1'"}, timeout: 10 * time.Second}},
		{name: "file size python EFBIG", limit: LimitFileSize, maxWall: 10,
			e: experiment{command: []string{"python3", "-c", "open('big','wb').write(b'x'*(3<<20))"}, maxFile: 1 << 20}},
		{name: "file size SIGXFSZ", limit: LimitFileSize, signal: "SIGXFSZ", maxWall: 10,
			e: experiment{command: []string{"sh", "-c", "exec head -c 3000000 /dev/zero > big"}, maxFile: 1 << 20}},
		{name: "memory", limit: LimitMemory, maxWall: 10,
			e: experiment{command: []string{"python3", "-c", "import time\nx=[]\nfor i in range(30):\n    x.append('y'*(10<<20))\n    time.sleep(0.02)\ntime.sleep(30)"},
				memory: 100 << 20}},
		{name: "workspace", limit: LimitWorkspace, maxWall: 10,
			e: experiment{command: []string{"sh", "-c", "for i in 1 2 3 4 5 6; do head -c 1000000 /dev/zero > f$i; done; sleep 30"},
				maxFile: 2 << 20, space: 3 << 20}},
	}
	for _, c := range cases {
		for _, bc := range backendCases {
			if bc.name == "bubblewrap-nobody" {
				continue
			}
			t.Run(c.name+"/"+bc.name, func(t *testing.T) {
				t.Parallel() // mostly waiting for a limit: the cases overlap
				e := c.e
				e.backend, e.asNobody = bc.backend, bc.asNobody
				res, _, err := e.run(t)
				if err != nil {
					t.Fatal(err)
				}
				sig := ""
				if res.Signal != nil {
					sig = *res.Signal
				}
				if res.LimitExceeded != c.limit || res.TimedOut != c.timedOut || (c.signal != "" && sig != c.signal) || res.WallSeconds > c.maxWall {
					t.Errorf("limit=%q timed_out=%v signal=%q rc=%v wall=%.2f; want %q %v %q; stderr=%s",
						res.LimitExceeded, res.TimedOut, sig, res.ReturnCode, res.WallSeconds, c.limit, c.timedOut, c.signal, res.StderrTail)
				}
				if c.limit == LimitMemory && (res.PeakRSSBytes == nil || *res.PeakRSSBytes < 100<<20) {
					t.Errorf("peak rss %v", res.PeakRSSBytes)
				}
			})
		}
	}
}

func TestLimitsApplied(t *testing.T) {
	requireRoot(t)
	for _, bc := range backendCases {
		t.Run(bc.name, func(t *testing.T) {
			e := experiment{backend: bc.backend, asNobody: bc.asNobody, command: []string{"cat", "/proc/self/limits"},
				timeout: 3 * time.Second, memory: 200 << 20, maxFile: 5 << 20}
			res, _, err := e.run(t)
			if err != nil {
				t.Fatal(err)
			}
			as := "1283457024" // 200 MiB + 1 GiB
			if IsCooperative(bc.backend) {
				as = "140737488355328" // 1<<47
			}
			want := []string{"Max cpu time              4                    5",
				"Max file size             5242881              5242881", // a file may hold 5 MiB exactly
				"Max core file size        0                    0",
				"Max address space         " + as}
			for _, w := range want {
				if !strings.Contains(res.StdoutTail, w) {
					t.Errorf("limits lack %q:\n%s", w, res.StdoutTail)
				}
			}
		})
	}
}

// TestFileOfExactlyTheLimit: max_file_mb is the largest file allowed, so a
// file of exactly that size is written whole and collected, and one byte
// more is a file-size breach with nothing over the limit collected.
func TestFileOfExactlyTheLimit(t *testing.T) {
	requireRoot(t)
	const limit = 1 << 20
	for _, c := range []struct {
		name  string
		size  int
		limit string
	}{{"exact", limit, ""}, {"one byte over", limit + 1, LimitFileSize}} {
		for _, bc := range backendCases {
			t.Run(c.name+"/"+bc.name, func(t *testing.T) {
				prog := "import sys\nopen('out.bin', 'wb').write(b'x' * " + strconv.Itoa(c.size) + ")\n"
				e := experiment{backend: bc.backend, asNobody: bc.asNobody, command: []string{"python3", "-c", prog},
					outputs: []string{"out.bin"}, maxFile: limit}
				res, _, err := e.run(t)
				if err != nil {
					t.Fatal(err)
				}
				a, kept := res.Artifacts["out.bin"]
				if res.LimitExceeded != c.limit || kept != (c.limit == "") || (kept && a.Bytes != int64(c.size)) {
					t.Errorf("limit %q, artifact %v (kept %v), rejected %v, rc %v; want limit %q", res.LimitExceeded, a, kept,
						res.RejectedOutputs, ptrValue(res.ReturnCode), c.limit)
				}
			})
		}
	}
}
