package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunnerStopsWhenItsHostIsGone has the runner write a reply into a pipe
// nobody reads any more, as when its host was killed with SIGKILL while a
// run ended: the write fails, and the runner must go on to kill what is
// left of its other runs, not die of SIGPIPE and leave them behind.
func TestRunnerStopsWhenItsHostIsGone(t *testing.T) {
	long, short := newMarker(), newMarker()
	cmd := exec.Command(selfExe(t), HelperArg, serveArg, "--parent-pid", strconv.Itoa(os.Getpid()))
	stderr := &tailBuffer{n: 4096}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	enc := newRequestEncoder(stdin)
	a := rawConfig(t, escapeScript(long, true))
	must(t, enc.Encode(runnerRequest{Op: "start", ID: 1, Config: &a}))
	waitFor(t, "the long run to start", 10*time.Second, func() bool { return len(markerProcs(long)) >= 2 })
	must(t, stdout.Close()) // the host is gone: nobody reads the replies
	b := rawConfig(t, []string{"sh", "-c", "exit 0", short})
	must(t, enc.Encode(runnerRequest{Op: "start", ID: 2, Config: &b}))
	// The short run's reply cannot be written: the runner says so, ends the
	// long run and exits on its own, its stdin still open.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if !strings.Contains(stderr.String(), "host gone") || err != nil {
			t.Fatalf("runner: %v (stderr %q); want it to say its host is gone and exit 0", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the runner is still there 20 s after its reply could not be written")
	}
	waitGone(t, long)
	_ = stdin.Close()
}

// TestRunnerStoppedUnderARun: a runner told to stop (SIGTERM, as from a
// `pkill -TERM` that missed its host) or killed ends the run's tree; the
// run's result is ErrRunnerLost (the caller records it interrupted), not
// an experiment that failed, and the next run starts on a new runner.
func TestRunnerStoppedUnderARun(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			self := selfExe(t)
			c, err := runnerFor(self)
			must(t, err)
			errc := make(chan error, 1)
			go func() {
				_, err := runHelper(context.Background(), Spec{SelfExe: self}, rawConfig(t, []string{"sleep", "30"}), func() {})
				errc <- err
			}()
			waitFor(t, "the run to start", 10*time.Second, func() bool { return len(runDescendants(c.pid)) > 0 })
			must(t, syscall.Kill(c.pid, sig))
			if err := <-errc; !errors.Is(err, ErrRunnerLost) {
				t.Fatalf("run: %v; want ErrRunnerLost", err)
			}
			res, err := runHelper(context.Background(), Spec{SelfExe: self}, rawConfig(t, []string{"true"}), func() {})
			if err != nil || res.ReturnCode == nil || *res.ReturnCode != 0 {
				t.Fatalf("the next run: %+v, %v", res, err)
			}
			<-c.dead // the stopped runner has ended its sweep
		})
	}
}

// TestCancelResumesAStoppedRunner: a runner someone stopped with SIGSTOP
// is continued by a cancel, so the run ends as cancelled at once instead
// of after the host's wait for a report.
func TestCancelResumesAStoppedRunner(t *testing.T) {
	c, err := runnerFor(selfExe(t))
	must(t, err)
	id, ch, err := c.start(rawConfig(t, []string{"sleep", "30"}), nil)
	must(t, err)
	waitFor(t, "the run to start", 10*time.Second, func() bool { return len(runDescendants(c.pid)) > 0 })
	must(t, syscall.Kill(c.pid, syscall.SIGSTOP))
	waitFor(t, "the runner to stop", 10*time.Second, func() bool {
		st, err := readStat(c.pid)
		return err == nil && st.state == 'T'
	})
	c.cancel(id)
	if rep := awaitRun(t, ch); !rep.Cancelled {
		t.Errorf("report %+v: want cancelled", rep)
	}
}
