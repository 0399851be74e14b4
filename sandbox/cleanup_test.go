package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func newMarker() string {
	return fmt.Sprintf("simjecture-marker-%d-%d", os.Getpid(), rand.Uint64())
}

// escapeScript starts a grandchild that calls setsid and ignores SIGTERM,
// waits until it runs, then either exits or (stay) loops ignoring SIGTERM.
func escapeScript(marker string, stay bool) []string {
	loop := `trap "" TERM; echo > started; while :; do sleep 0.1; done`
	script := "setsid sh -c '" + loop + "' " + marker + "-gc &\nwhile [ ! -e started ]; do sleep 0.02; done\n"
	if stay {
		script += "trap '' TERM; while :; do sleep 0.1; done\n"
	}
	return []string{"sh", "-c", script, marker}
}

func waitGone(t *testing.T, marker string) {
	t.Helper()
	waitFor(t, "marker processes to vanish", 10*time.Second, func() bool { return len(markerProcs(marker)) == 0 })
}

func TestGrandchildGoneAfterRun(t *testing.T) {
	requireRoot(t)
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			marker := newMarker()
			e := experiment{backend: c.backend, asNobody: c.asNobody, command: escapeScript(marker, false), outputs: []string{"started"}}
			res, _, err := e.run(t)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Artifacts) != 1 || res.ReturnCode == nil || *res.ReturnCode != 0 {
				t.Fatalf("grandchild never started: %+v %s", res.Artifacts, res.StderrTail)
			}
			waitGone(t, marker)
		})
	}
}

// startRun runs the experiment in a separate process of the test binary
// (as nobody when asked) and returns it with the marker it waits for.
func startRun(t *testing.T, e experiment) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	spec := e.spec(t)
	in, err := json.Marshal(spec)
	must(t, err)
	var cmd *exec.Cmd
	if e.asNobody {
		cmd = nobodyCommand(t, "run")
	} else {
		cmd = exec.Command(os.Args[0])
		cmd.Env = []string{envTestHelper + "=run", "PATH=/usr/bin:/bin", raceNoExitSleep}
	}
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &out, os.Stderr
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, &out
}

// startEscapingRun starts, in a host process of its own, a run of backend
// case c whose setsid grandchild ignores SIGTERM, and waits until it runs.
func startEscapingRun(t *testing.T, c backendCase) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	marker := newMarker()
	e := experiment{backend: c.backend, asNobody: c.asNobody, command: escapeScript(marker, true), timeout: time.Minute}
	cmd, out := startRun(t, e)
	waitFor(t, "experiment to start", 10*time.Second, func() bool { return len(markerProcs(marker)) >= 2 })
	return cmd, out, marker
}

func TestCancelKillsTree(t *testing.T) {
	requireRoot(t)
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			cmd, out, marker := startEscapingRun(t, c)
			start := time.Now()
			must(t, cmd.Process.Signal(syscall.SIGTERM))
			must(t, cmd.Wait())
			var r runOutput
			must(t, json.Unmarshal(out.Bytes(), &r))
			if !r.Result.Cancelled || r.Err != "" || time.Since(start) > 8*time.Second {
				t.Errorf("cancelled=%v err=%q after %s", r.Result.Cancelled, r.Err, time.Since(start))
			}
			waitGone(t, marker)
		})
	}
}

func TestHostKilledMidRun(t *testing.T) {
	requireRoot(t)
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			cmd, _, marker := startEscapingRun(t, c)
			must(t, cmd.Process.Kill())
			_ = cmd.Wait()
			waitGone(t, marker)
		})
	}
}

func TestForkBombContained(t *testing.T) {
	requireRoot(t)
	marker := newMarker()
	e := experiment{backend: Bubblewrap, command: []string{"sh", "-c", "b() { b | b & }; b; wait", marker},
		timeout: 5 * time.Second, memory: 256 << 20}
	res, _, err := e.run(t)
	if err != nil {
		t.Fatal(err)
	}
	capped := strings.HasSuffix(res.Containment, ContainmentPids) // the cap may end the bomb before any limit
	if res.LimitExceeded != LimitMemory && res.LimitExceeded != LimitWallTime && !capped {
		t.Errorf("limit = %q, want memory or wall_time, or the pids cap (containment %q, stderr %s)",
			res.LimitExceeded, res.Containment, res.StderrTail)
	}
	t.Logf("fork bomb: limit=%s wall=%.2fs peak=%v", res.LimitExceeded, res.WallSeconds, ptrValue(res.PeakRSSBytes)) // a bomb the pids cap ended at once may leave no sample
	waitGone(t, marker)
}

// zombieLeaderScript starts a grandchild that calls setsid, ignores SIGTERM
// and ends its main thread (pthread_exit) while another thread runs on: a
// zombie leader whose process is alive. The experiment ends once the main
// thread has gone.
func zombieLeaderScript(marker string) []string {
	py := `import ctypes, os, signal, threading, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def run():
    while open("/proc/%d/stat" % os.getpid()).read().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.01)
    open("started", "w").close()
    while True:
        time.sleep(0.1)
threading.Thread(target=run).start()
ctypes.CDLL(None).pthread_exit(None)
`
	script := "setsid python3 -c '" + py + "' " + marker + " &\nwhile [ ! -e started ]; do sleep 0.02; done\n"
	return []string{"sh", "-c", script, marker}
}

// liveThreads lists the threads, of any process, whose command line holds marker.
func liveThreads(marker string) []string {
	var out []string
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*")
	for _, task := range tasks {
		b, err := os.ReadFile(task + "/cmdline")
		if err != nil || !strings.Contains(string(b), marker) || !strings.HasPrefix(string(b), "python3\x00") {
			continue
		}
		if st, err := os.ReadFile(task + "/stat"); err == nil && !bytes.Contains(st, []byte(") Z ")) {
			out = append(out, task)
		}
	}
	return out
}

func TestZombieLeaderGoneAfterRun(t *testing.T) {
	requireRoot(t)
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			marker := newMarker()
			e := experiment{backend: c.backend, asNobody: c.asNobody, command: zombieLeaderScript(marker), outputs: []string{"started"}}
			res, _, err := e.run(t)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Artifacts) != 1 || res.ReturnCode == nil || *res.ReturnCode != 0 {
				t.Fatalf("grandchild never started: %+v %s", res.Artifacts, res.StderrTail)
			}
			waitFor(t, "the zombie leader's threads to vanish", 10*time.Second, func() bool { return len(liveThreads(marker)) == 0 })
		})
	}
}

// TestRunnerKilledMidRun kills the runner (not the host) while a run's
// setsid grandchild ignores SIGTERM: the host finds the runner's tagged
// processes and kills them, for every backend.
func TestRunnerKilledMidRun(t *testing.T) {
	requireRoot(t)
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			cmd, _, marker := startEscapingRun(t, c)
			runner := 0
			for _, pid := range descendants(cmd.Process.Pid) {
				if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && strings.Contains(string(b), HelperArg+"\x00"+serveArg) {
					runner = pid
				}
			}
			if runner == 0 {
				t.Fatal("no runner below the host")
			}
			must(t, syscall.Kill(runner, syscall.SIGKILL))
			waitGone(t, marker)
			_ = cmd.Wait() // the host reports the runner's death and exits
		})
	}
}
