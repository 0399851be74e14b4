package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
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
