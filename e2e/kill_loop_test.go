package e2e

import (
	"bytes"
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

// Kill-loop settings: killLoops studies, each killed at a random delay
// below killEarly or killMaxDelay; every process of a killed study must be gone within
// killGrace.
const (
	killLoops    = 24
	killMaxDelay = 1500 * time.Millisecond
	killEarly    = 250 * time.Millisecond // the probe starts ~15 ms in, the first launch ~80 ms
	killGrace    = 2 * time.Second
)

// killStudy is a study whose agent is testdata/kill_agent.sh.
type killStudy struct {
	dir, hyp, ins, exe, marker string
}

func newKillStudy(t *testing.T) killStudy {
	t.Helper()
	tmp := t.TempDir()
	k := killStudy{dir: filepath.Join(tmp, "study"), hyp: filepath.Join(tmp, "hypothesis.txt"),
		ins: filepath.Join(tmp, "instructions.txt"), exe: filepath.Join(tmp, "agent", "kill_agent.sh"),
		marker: "e2e-kill-" + randomHex(t)}
	src, err := os.ReadFile(filepath.Join("testdata", "kill_agent.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Dir(k.exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.exe, src, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(filepath.Dir(k.exe), "marker"), k.marker)
	writeFile(t, k.hyp, "A killed supervisor leaves no process behind.\n")
	writeFile(t, k.ins, "Kill loop test.\n")
	return k
}

func (k killStudy) args() []string {
	return []string{"study", "--campaign", k.dir, "--hypothesis-file", k.hyp, "--instructions-file", k.ins,
		"--backend", "command", "--executable", k.exe, "--execution-backend", "bubblewrap",
		"--wall-seconds", "300", "--turn-seconds", "60", "--batch"}
}

// TestKill9LoopLeavesNoProcess kills the supervisor with SIGKILL at a random
// (seeded) delay, killLoops times, so that kills land while bwrap is probed,
// while experiments are launched (bwrap holding its child on --block-fd),
// while they run and while they are collected. Every launcher, runner and
// experiment process of the study must be gone within killGrace; resume
// then finds every receipt, the killed ones interrupted, and verify passes.
// E2E_KILL_SEED=N replays a seed.
func TestKill9LoopLeavesNoProcess(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("E2E_KILL_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	var worst time.Duration
	for i := range killLoops {
		window := killMaxDelay // two kills in three land among the probe and the first launches
		if rng.IntN(3) > 0 {
			window = killEarly
		}
		delay := time.Duration(rng.Int64N(int64(window)))
		took := killOnce(t, i, delay)
		worst = max(worst, took)
	}
	t.Logf("slowest cleanup after SIGKILL: %v", worst.Round(time.Millisecond))
}

// killOnce runs one study, kills its supervisor after delay and checks what
// is left; it returns how long the processes took to go.
func killOnce(t *testing.T, i int, delay time.Duration) time.Duration {
	t.Helper()
	k := newKillStudy(t)
	sup := startGroup(t, k.args())
	time.Sleep(delay) // the kill's random moment is what this test varies
	at := runProcs(k.marker, sup.cmd.Process.Pid)
	if err := sup.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	took := waitNoneLeft(t, k.marker, sup.cmd.Process.Pid, killed)
	sup.wait(t, 5*time.Second)
	t.Logf("kill %2d at %4dms (alive then: %s): gone after %v", i, delay.Milliseconds(), phase(at), took.Round(time.Millisecond))
	checkResume(t, k)
	return took
}

// startGroup runs the binary in the background as the leader of a new
// process group, so that what it starts without a group of its own (the
// bwrap probe) can be found after it is killed.
func startGroup(t *testing.T, args []string) *bg {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b := &bg{cmd: cmd, out: &bytes.Buffer{}, errb: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = b.out, b.errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("start simjecture %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		_ = cmd.Wait()
		close(b.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-b.done
	})
	return b
}

// waitNoneLeft polls /proc until no process of the killed study is left and
// returns how long that took; survivors of killGrace fail the test, named
// with their state and wait channel, and are then killed.
func waitNoneLeft(t *testing.T, marker string, sup int, killed time.Time) time.Duration {
	t.Helper()
	for {
		left := runProcs(marker, sup)
		took := time.Since(killed)
		if len(left) == 0 {
			return took
		}
		if took > killGrace {
			t.Errorf("%v after SIGKILL of the supervisor, processes of its study are left:%s", killGrace, describeProcs(left))
			for _, p := range left {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
			return took
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkResume resumes a killed study whose agent then cancels it: every
// receipt seen after the kill is kept, those that were running are
// interrupted, none runs, and verify passes. A study killed before it was
// created has nothing to resume: status must then say so in one of the
// documented lines (statusAfterKill); any other failure fails the test.
func checkResume(t *testing.T, k killStudy) {
	t.Helper()
	before, ok := statusAfterKill(t, k.dir)
	if !ok {
		t.Logf("  no study to resume")
		return
	}
	writeFile(t, filepath.Join(filepath.Dir(k.exe), "stop"), "")
	if r := sj(t, "", "resume", "--campaign", k.dir, "--batch"); r.code != 0 {
		t.Errorf("resume after SIGKILL: want exit 0, got %s", r)
		return
	}
	after := status(t, k.dir)
	for _, e := range before.Experiments {
		got, ok := after.experiment(e.ID)
		switch {
		case !ok:
			t.Errorf("receipt %s (%s before resume) is lost", e.ID, e.Status)
		case (e.Status == "running" || e.Status == "interrupted") && got.Status != "interrupted":
			t.Errorf("receipt %s was %s when its supervisor was killed, is %s after resume; want interrupted", e.ID, e.Status, got.Status)
		}
	}
	if run := after.withStatus("running"); len(run) > 0 {
		t.Errorf("after the resumed study was cancelled, receipts still run: %+v", run)
	}
	if r := sj(t, "", "verify", "--campaign", k.dir); r.code != 0 {
		t.Errorf("verify after SIGKILL and resume: want exit 0, got %s", r)
	}
}

// runProc is one live process of a study.
type runProc struct {
	pid                   int
	state, ppid, pgrp     string
	wchan, cmdline, label string
}

// runProcs lists the live processes of the study whose supervisor is sup:
// those whose command line carries marker (the experiments and their bwrap
// launchers), sup's sandbox runner, and the members of sup's process group
// (the bwrap probe). Zombies are skipped.
func runProcs(marker string, sup int) []runProc {
	entries, _ := os.ReadDir("/proc")
	runner := []byte("__sandbox-runner\x00--serve\x00--parent-pid\x00" + strconv.Itoa(sup) + "\x00")
	var out []runProc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		p, ok := readRunProc(pid)
		if !ok || p.state == "Z" {
			continue
		}
		cmd := []byte(p.cmdline)
		switch {
		case bytes.Contains(cmd, []byte(marker)):
			p.label = "experiment"
			if filepath.Base(strings.SplitN(p.cmdline, "\x00", 2)[0]) == "bwrap" {
				p.label = "launcher"
			}
		case bytes.Contains(cmd, runner):
			p.label = "runner"
		case p.pgrp == strconv.Itoa(sup) && pid != sup:
			p.label = "group"
			if filepath.Base(strings.SplitN(p.cmdline, "\x00", 2)[0]) == "bwrap" {
				p.label = "probe"
			}
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

func readRunProc(pid int) (runProc, bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return runProc{}, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return runProc{}, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 3 {
		return runProc{}, false
	}
	cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
	wchan, _ := os.ReadFile(filepath.Join(dir, "wchan"))
	return runProc{pid: pid, state: f[0], ppid: f[1], pgrp: f[2], wchan: string(wchan), cmdline: string(cmdline)}, true
}

func describeProcs(ps []runProc) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  %s %d: state %s, ppid %s, wchan %s: %s", p.label, p.pid, p.state, p.ppid, p.wchan,
			strings.ReplaceAll(strings.TrimRight(p.cmdline, "\x00"), "\x00", " "))
	}
	return b.String()
}

// phase summarises what of a study was alive, for the log.
func phase(ps []runProc) string {
	n := map[string]int{}
	for _, p := range ps {
		n[p.label]++
	}
	if len(n) == 0 {
		return "none"
	}
	var parts []string
	for _, l := range []string{"probe", "group", "runner", "launcher", "experiment"} {
		if n[l] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[l], l))
		}
	}
	return strings.Join(parts, ", ")
}
