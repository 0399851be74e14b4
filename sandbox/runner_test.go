package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// rawConfig runs argv as a plain process in a fresh folder, bypassing Run.
func rawConfig(t *testing.T, argv []string) helperConfig {
	dir := t.TempDir()
	return helperConfig{ParentPID: os.Getpid(), Timeout: time.Minute, Dir: dir, Argv: argv,
		Stdout: filepath.Join(dir, "out"), Stderr: filepath.Join(dir, "err"), Env: []string{"PATH=/usr/bin:/bin"}}
}

func selfExe(t *testing.T) string {
	self, err := filepath.Abs(os.Args[0])
	must(t, err)
	return self
}

func awaitRun(t *testing.T, ch <-chan helperReport) helperReport {
	t.Helper()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case rep, ok := <-ch:
		if !ok {
			t.Fatal("runner died")
		}
		return rep
	case <-timer.C:
		t.Fatal("no report after 30 s")
	}
	return helperReport{}
}

func TestOneShotHelper(t *testing.T) {
	cfg := rawConfig(t, []string{"sh", "-c", "echo hi; exit 3"})
	js, err := json.Marshal(cfg)
	must(t, err)
	out, err := exec.Command(selfExe(t), HelperArg, configArg, string(js)).Output()
	must(t, err)
	var rep helperReport
	must(t, json.Unmarshal(out, &rep))
	if rep.ExitCode == nil || *rep.ExitCode != 3 || rep.Error != "" {
		t.Fatalf("report %+v", rep)
	}
}

// TestConcurrentRunsIsolated runs two experiments on one runner: the second
// leaves a grandchild that called setsid and ends; its cleanup must kill
// that grandchild but none of the first run's processes.
func TestConcurrentRunsIsolated(t *testing.T) {
	c, err := runnerFor(selfExe(t))
	must(t, err)
	a, b := newMarker(), newMarker()
	idA, chA, err := c.start(rawConfig(t, escapeScript(a, true)), nil)
	must(t, err)
	waitFor(t, "run A to start", 10*time.Second, func() bool { return len(markerProcs(a)) >= 2 })
	_, chB, err := c.start(rawConfig(t, escapeScript(b, false)), nil)
	must(t, err)
	if rep := awaitRun(t, chB); rep.ExitCode == nil || *rep.ExitCode != 0 {
		t.Fatalf("run B: %+v", rep)
	}
	waitGone(t, b)
	if n := len(markerProcs(a)); n < 2 {
		t.Fatalf("run A lost processes when run B ended: %d left", n)
	}
	c.cancel(idA)
	if rep := awaitRun(t, chA); !rep.Cancelled {
		t.Errorf("run A: %+v", rep)
	}
	waitGone(t, a)
}

// TestRunnerRestarts kills the runner mid-run: the run fails with
// ErrHelper and the next run starts a new runner.
func TestRunnerRestarts(t *testing.T) {
	self := selfExe(t)
	c, err := runnerFor(self)
	must(t, err)
	_, ch, err := c.start(rawConfig(t, []string{"sleep", "30"}), nil)
	must(t, err)
	waitFor(t, "the run to start", 10*time.Second, func() bool { return len(runDescendants(c.pid)) > 0 })
	must(t, syscall.Kill(c.pid, syscall.SIGKILL))
	if _, ok := <-ch; ok {
		t.Fatal("a report from a killed runner")
	}
	<-c.dead
	if !errors.Is(c.err, errRunnerGone) {
		t.Errorf("err = %v", c.err)
	}
	// The killed runner's run cgroup (where there is one) is removed by its
	// host, once empty, before the host reports the runner gone.
	if v2 := ownV2Dir(); v2 != "" && os.Geteuid() == 0 {
		if left, _ := filepath.Glob(filepath.Join(v2, runCgroups+strconv.Itoa(c.pid)+"-*")); len(left) > 0 {
			t.Errorf("the killed runner's cgroups are still there: %v", left)
		}
	}
	c2, err := runnerFor(self)
	must(t, err)
	if c2 == c {
		t.Fatal("dead runner reused")
	}
	_, ch, err = c2.start(rawConfig(t, []string{"true"}), nil)
	must(t, err)
	if rep := awaitRun(t, ch); rep.ExitCode == nil || *rep.ExitCode != 0 {
		t.Errorf("after restart: %+v", rep)
	}
}
