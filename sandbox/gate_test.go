package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestGateCodeIsItsSource assembles gate/gate_amd64.S again and compares
// its .text with gateCode.
func TestGateCodeIsItsSource(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the start gate is written for amd64 only")
	}
	for _, tool := range []string{"as", "objcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s (binutils) is not installed: gateCode not checked against its source", tool)
		}
	}
	dir := t.TempDir()
	obj, bin := filepath.Join(dir, "gate.o"), filepath.Join(dir, "gate.bin")
	for _, argv := range [][]string{{"as", "--64", "-o", obj, "gate/gate_amd64.S"}, {"objcopy", "-O", "binary", "-j", ".text", obj, bin}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	got, err := os.ReadFile(bin)
	must(t, err)
	if !bytes.Equal(got, gateCode) {
		t.Fatalf("gateCode (%d bytes) is not gate/gate_amd64.S assembled (%d bytes): regenerate gate_amd64.go", len(gateCode), len(got))
	}
}

// TestGateSetsTheLimits: a cooperative run starts through the start gate,
// which leaves the experiment the limits, folder, logs and descriptors
// the ptrace stop does; with the gate turned off, the ptrace stop is used.
func TestGateSetsTheLimits(t *testing.T) {
	requireRoot(t)
	if len(gateCode) == 0 {
		t.Skip("no start gate for " + runtime.GOARCH)
	}
	script := "import os, sys\nprint(open('/proc/self/limits').read())\nprint(os.getcwd())\nsys.stderr.write('to-stderr\\n')\nprint(' '.join(sorted(os.listdir('/proc/self/fd'))))"
	for _, b := range []Backend{ProcessCooperative, ProotCooperative} {
		for _, noGate := range []bool{false, true} {
			want := LaunchGate
			if noGate {
				want = LaunchPtrace
			}
			t.Run(string(b)+"/"+want, func(t *testing.T) {
				e := experiment{backend: b, asNobody: true, noGate: noGate, command: []string{"python3", "-c", script},
					timeout: 3 * time.Second, maxFile: 5 << 20}
				res, _, err := e.run(t)
				if err != nil {
					t.Fatal(err)
				}
				if res.Launch != want || res.ReturnCode == nil || *res.ReturnCode != 0 {
					t.Fatalf("launch %q rc %v, want %q and 0; stderr %s", res.Launch, ptrValue(res.ReturnCode), want, res.StderrTail)
				}
				out := res.StdoutTail
				for _, w := range []string{"Max cpu time              4                    5",
					"Max file size             5242881              5242881", "Max core file size        0                    0",
					"Max address space         140737488355328"} {
					if !strings.Contains(out, w) {
						t.Errorf("limits lack %q:\n%s", w, out)
					}
				}
				if tag := rttimeTag(out); tag == 0 {
					t.Errorf("no run tag in RLIMIT_RTTIME:\n%s", out)
				}
				if !strings.HasSuffix(out, "/work\n0 1 2 3\n") {
					t.Errorf("want the work folder, then fds 0-3 only (3: ls's own):\n%s", out)
				}
				if !strings.Contains(res.StderrTail, "to-stderr") {
					t.Errorf("stderr log %q", res.StderrTail)
				}
			})
		}
	}
}

// rttimeTag returns the soft RLIMIT_RTTIME of a /proc/PID/limits text when
// it is a run tag (soft and hard equal, above rtTagBase), or 0.
func rttimeTag(limits string) uint64 {
	for _, line := range strings.Split(limits, "\n") {
		if f := strings.Fields(strings.TrimPrefix(line, "Max realtime timeout")); len(f) >= 2 && f[0] != line {
			soft, err1 := strconv.ParseUint(f[0], 10, 64)
			hard, err2 := strconv.ParseUint(f[1], 10, 64)
			if err1 == nil && err2 == nil && soft == hard && soft > rtTagBase {
				return soft - rtTagBase
			}
		}
	}
	return 0
}

// TestGateReportsAStartFailure: a program the kernel cannot execute is
// the same harness error through the gate as through the ptrace stop.
func TestGateReportsAStartFailure(t *testing.T) {
	requireRoot(t)
	if len(gateCode) == 0 {
		t.Skip("no start gate for " + runtime.GOARCH)
	}
	var errs []string
	for _, noGate := range []bool{false, true} {
		// An empty file the kernel refuses (ENOEXEC), sealed with its
		// execute bits: lookPathEnv finds it, so neither falls back to the
		// shell barrier.
		e := experiment{backend: ProcessCooperative, asNobody: true, noGate: noGate, files: map[string]string{"empty": ""},
			command: []string{"./empty"}}
		spec := e.spec(t)
		must(t, os.Chmod(spec.Sealed[0].HostPath, 0o755))
		res, err := runSpecAsNobody(t, spec, noGate)
		if err == "" {
			t.Fatalf("no gate %v: an empty program started: launch %q rc %v", noGate, res.Launch, ptrValue(res.ReturnCode))
		}
		errs = append(errs, strings.ReplaceAll(err, spec.RunDir, "RUN"))
	}
	if errs[0] != errs[1] || !strings.Contains(errs[0], "fork/exec RUN/work/empty: exec format error") {
		t.Fatalf("gate: %q\nptrace stop: %q", errs[0], errs[1])
	}
}

// runSpecAsNobody runs spec in the test binary's "run" mode as nobody.
func runSpecAsNobody(t testing.TB, spec Spec, noGate bool) (Result, string) {
	t.Helper()
	cmd := nobodyCommand(t, "run")
	if noGate {
		cmd.Env = append(cmd.Env, envNoGate+"=1")
	}
	in, err := json.Marshal(spec)
	must(t, err)
	cmd.Stdin = bytes.NewReader(in)
	var out runOutput
	runJSON(t, cmd, &out)
	return out.Result, out.Err
}

// runStepsAsNobody runs steps one after the other on one runner, the specs
// of a step at the same time, in the test binary's "runmany" mode as
// nobody. The results come in the order of the specs.
func runStepsAsNobody(t *testing.T, steps [][]Spec) []runOutput {
	t.Helper()
	cmd := nobodyCommand(t, "runmany")
	in, err := json.Marshal(steps)
	must(t, err)
	cmd.Stdin = bytes.NewReader(in)
	var outs []runOutput
	runJSON(t, cmd, &outs)
	n := 0
	for _, s := range steps {
		n += len(s)
	}
	if len(outs) != n {
		t.Fatalf("%d results for %d runs", len(outs), n)
	}
	return outs
}

// TestSpareGateOutlivesOtherRuns: the spare gate the runner forks while
// another run goes on (here after a short run beside it ended) is not
// taken for an orphan of that run, which the run's end kills: the next run
// on the same runner starts through that same gate (the gate becomes the
// experiment, so the experiment's pid is the gate's).
func TestSpareGateOutlivesOtherRuns(t *testing.T) {
	requireRoot(t)
	if len(gateCode) == 0 {
		t.Skip("no start gate for " + runtime.GOARCH)
	}
	spec := func(cmd ...string) Spec {
		return experiment{backend: ProcessCooperative, asNobody: true, command: cmd}.spec(t)
	}
	orphan := "sleep 0.5 & " + waitSpare + "echo $g; sleep 0.2"
	outs := runStepsAsNobody(t, [][]Spec{{spec("sh", "-c", orphan), spec("true")}, {spec("sh", "-c", "echo $$")}})
	for i, o := range outs {
		if o.Err != "" || o.Result.ReturnCode == nil || *o.Result.ReturnCode != 0 {
			t.Errorf("run %d: err %q launch %q rc %v", i, o.Err, o.Result.Launch, ptrValue(o.Result.ReturnCode))
		}
	}
	spare, next := strings.TrimSpace(outs[0].Result.StdoutTail), strings.TrimSpace(outs[2].Result.StdoutTail)
	if spare == "" || next != spare || outs[2].Result.Launch != LaunchGate {
		t.Errorf("the run after started as pid %q (launch %q), want the spare gate %q forked beside the first run", next, outs[2].Result.Launch, spare)
	}
}

// waitSpare is a shell line that waits up to 5 s for its runner's spare
// start gate (the experiment's parent is the runner: the gate became it)
// and leaves its pid in $g.
const waitSpare = "for i in $(seq 500); do g=$(pgrep -P $PPID -f '^" + gateArgv0 + "$') && break; sleep 0.01; done; "

// TestOrphanScanSkipsTheSpareGate: a spare gate that the runner's main
// thread forked is listed among the main thread's children with the
// orphans, and is not claimed by an active run.
func TestOrphanScanSkipsTheSpareGate(t *testing.T) {
	if len(gateCode) == 0 {
		t.Skip("no start gate for " + runtime.GOARCH)
	}
	s := newServer(os.Getppid())
	w := newWatchdog(helperConfig{}, s, 1)
	s.begin(w)
	tid := make(chan int)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // the gate is this thread's child, as an orphan is the main thread's
		defer runtime.UnlockOSThread()
		s.refillGate()
		tid <- unix.Gettid()
		<-done
	}()
	kids := "/proc/self/task/" + strconv.Itoa(<-tid) + "/children"
	defer close(done)
	s.kidsFile = func() (int, error) { return unix.Open(kids, unix.O_RDONLY|unix.O_CLOEXEC, 0) }
	if s.gate == nil {
		t.Fatal("no spare gate")
	}
	pid := s.gate.pid
	defer func() {
		s.closeGate()
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
	}()
	if !slices.Contains(s.leaderChildren(), pid) {
		t.Fatalf("gate %d not among the forking thread's children %v", pid, s.leaderChildren())
	}
	if got := s.orphansOf(w); slices.Contains(got, pid) {
		t.Fatalf("the run claims the spare gate %d as an orphan: %v", pid, got)
	}
}

// runDescendants lists the runner's descendants but its spare start gate,
// which is there before any run.
func runDescendants(runner int) []int {
	var out []int
	for _, pid := range descendants(runner) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && strings.HasPrefix(string(b), gateArgv0+"\x00") {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// TestReapedSpareGateIsForgotten: a spare gate that someone killed is
// dropped when the reaper collects it, so that its pid, free again, is
// never handed to a run as the spare.
func TestReapedSpareGateIsForgotten(t *testing.T) {
	if len(gateCode) == 0 {
		t.Skip("no start gate for " + runtime.GOARCH)
	}
	s := newServer(os.Getppid())
	s.refillGate()
	if s.gate == nil {
		t.Fatal("no spare gate")
	}
	pid := s.gate.pid
	must(t, syscall.Kill(pid, syscall.SIGKILL))
	waitFor(t, "the gate to end", 5*time.Second, func() bool {
		st, err := readStat(pid)
		return err == nil && st.state == 'Z'
	})
	s.reap()
	if s.gate != nil {
		t.Fatalf("the reaped gate %d is still the spare", s.gate.pid)
	}
	if _, err := readStat(pid); err == nil {
		t.Fatalf("gate %d not reaped", pid)
	}
}

// TestSpareGateKilledOrStopped: a run's experiment kills, or stops, the
// spare gate its runner forked for the next run while it went on (after a
// short run beside it ended). The next run still starts (through a new
// gate, or the ptrace stop while the killed spare is not reaped yet;
// through the continued gate when it was stopped) and the run after it has
// a gate.
func TestSpareGateKilledOrStopped(t *testing.T) {
	requireRoot(t)
	if len(gateCode) == 0 {
		t.Skip("no start gate for " + runtime.GOARCH)
	}
	for _, sig := range []string{"KILL", "STOP"} {
		t.Run(sig, func(t *testing.T) {
			// A killed spare is waited for until it is a zombie, which a
			// reaper round collects.
			hit := waitSpare + "kill -" + sig + " $g; " +
				"[ " + sig + " = STOP ] || while [ \"$(cut -d' ' -f3 /proc/$g/stat)\" != Z ]; do sleep 0.01; done"
			spec := func(cmd ...string) Spec {
				return experiment{backend: ProcessCooperative, asNobody: true, command: cmd, timeout: 20 * time.Second}.spec(t)
			}
			outs := runStepsAsNobody(t, [][]Spec{{spec("sh", "-c", hit), spec("true")}, {spec("true")}, {spec("true")}})
			for i, o := range outs {
				if o.Err != "" || o.Result.ReturnCode == nil || *o.Result.ReturnCode != 0 || o.Result.WallSeconds > 5 {
					t.Errorf("run %d: err %q rc %v wall %.2f s launch %q; stderr %s", i, o.Err, ptrValue(o.Result.ReturnCode),
						o.Result.WallSeconds, o.Result.Launch, o.Result.StderrTail)
				}
			}
			if len(outs) == 4 && outs[3].Result.Launch != LaunchGate {
				t.Errorf("the run after: launch %q, want %q (a new spare)", outs[3].Result.Launch, LaunchGate)
			}
		})
	}
}

// TestTransientGateErrors: a fork refused for want of processes, descriptors
// or memory leaves the gates on (the next run gets one); anything else
// turns them off.
func TestTransientGateErrors(t *testing.T) {
	for _, c := range []struct {
		err       error
		transient bool
	}{
		{fmt.Errorf("gate: start: %w", unix.EAGAIN), true},
		{fmt.Errorf("gate: start: %w", unix.ENOMEM), true},
		{fmt.Errorf("gate: socketpair: %w", unix.EMFILE), true},
		{fmt.Errorf("gate: start: %w", unix.EACCES), false},
		{fmt.Errorf("gate: start: %w", unix.ENOEXEC), false},
		{errors.New("gate: no pidfd"), false},
	} {
		if got := transientGateError(c.err); got != c.transient {
			t.Errorf("%v: transient %v, want %v", c.err, got, c.transient)
		}
	}
}
