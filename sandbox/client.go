package sandbox

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// errRunnerGone is returned for runs whose runner died.
var errRunnerGone = errors.New("runner exited")

// clients holds the persistent runner of each SelfExe.
var clients = struct {
	mu sync.Mutex
	m  map[string]*runnerClient
}{m: map[string]*runnerClient{}}

// runnerClient talks to one persistent runner (HelperArg --serve). Its one
// goroutine starts the runner on a thread it keeps locked (the runner's
// PR_SET_PDEATHSIG follows that thread), reads the replies and waits for
// the runner to exit.
type runnerClient struct {
	mu      sync.Mutex // guards stdin, enc, nextID and pending
	stdin   io.WriteCloser
	enc     *gob.Encoder // the request stream on stdin (wire.go)
	nextID  uint64
	pending map[uint64]chan helperReport
	usage   map[uint64]func(Usage) // the live-usage receivers of pending runs (Spec.Usage)
	stderr  *tailBuffer
	pid     int           // the runner's pid
	dead    chan struct{} // closed once the runner has exited
	err     error         // why it exited; read after dead is closed
	retired bool          // it said it is stopping: no more runs on it (under mu)
	stopped bool          // it exited 0, having reported every run it started; read after dead
	wg      sync.WaitGroup
}

// runnerFor returns the running runner of self, starting one when there is
// none or the last one died.
func runnerFor(self string) (*runnerClient, error) {
	clients.mu.Lock()
	defer clients.mu.Unlock()
	if c := clients.m[self]; c != nil && c.usable() {
		return c, nil
	}
	c, err := startRunner(self)
	if err != nil {
		return nil, err
	}
	clients.m[self] = c
	return c, nil
}

// CloseRunners stops the persistent runners this process started (closing
// their stdin ends their runs) and waits for them. Run starts a new one
// when called again.
func CloseRunners() {
	clients.mu.Lock()
	defer clients.mu.Unlock()
	for self, c := range clients.m {
		c.mu.Lock()
		c.resume()
		_ = c.stdin.Close()
		c.mu.Unlock()
		c.awaitEnd()
		delete(clients.m, self)
	}
}

func startRunner(self string) (*runnerClient, error) {
	c := &runnerClient{pending: map[uint64]chan helperReport{}, usage: map[uint64]func(Usage){}, stderr: &tailBuffer{n: 4096},
		dead: make(chan struct{})}
	started := make(chan error, 1)
	c.wg.Go(func() { c.serve(self, started) })
	if err := <-started; err != nil {
		c.wg.Wait()
		return nil, fmt.Errorf("%w: start: %w", ErrHelper, err)
	}
	return c, nil
}

// serve owns the runner process for its whole life. Its thread stays
// locked while the runner lives, so the runner's parent-death signal fires
// only when we die; it is unlocked once the runner was reaped, so the
// thread never ends: its end would fire the parent-death signal of every
// child other goroutines forked on it before (an agent, an ssh master).
func (c *runnerClient) serve(self string, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread() // runs last: after the Wait, or a failed Start
	defer close(c.dead)
	cmd := exec.Command(self, HelperArg, serveArg, "--parent-pid", strconv.Itoa(os.Getpid()))
	cmd.Env = []string{}
	if v, ok := os.LookupEnv("GORACE"); ok {
		// Read only by race-enabled builds (the tests': they turn off the
		// race runtime's one-second sleep at exit).
		cmd.Env = append(cmd.Env, "GORACE="+v)
	}
	cmd.Stderr = c.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	stdin, err := cmd.StdinPipe()
	var stdout io.ReadCloser
	if err == nil {
		stdout, err = cmd.StdoutPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		c.err = err
		started <- err
		return
	}
	c.stdin, c.enc, c.pid = stdin, newRequestEncoder(stdin), cmd.Process.Pid
	started <- nil
	// The replies are read on a goroutine of their own: one on a locked
	// thread cannot run the run it wakes without handing its scheduler
	// slot to another thread (tens of µs per reply).
	var rd sync.WaitGroup
	rd.Go(func() { c.readReplies(stdout) })
	rd.Wait()
	werr := cmd.Wait()
	// A runner that died (rather than ended with its parent's stdin) may
	// leave processes of its runs: kill those it tagged, and remove its
	// run cgroups once they are empty.
	killTagged(c.pid)
	removeRunnerCgroups(c.pid)
	if werr == nil { // it stopped of its own accord (told to, or its stdin closed)
		c.stopped = true
		werr = errors.New("it stopped")
	}
	c.err = fmt.Errorf("%w: %w: %s", errRunnerGone, werr, c.stderr.String())
	c.failPending()
}

// readReplies delivers the runner's replies until its stdout ends (or
// carries something that is not a reply: the runner is then killed with
// its stdin, see serve).
func (c *runnerClient) readReplies(stdout io.Reader) {
	rd := newReplyReader(stdout)
	for {
		rep, err := rd.read()
		if err != nil {
			return
		}
		c.deliver(rep)
	}
}

func (c *runnerClient) deliver(rep runnerReply) {
	c.mu.Lock()
	if rep.Live != nil {
		f := c.usage[rep.ID]
		c.mu.Unlock()
		if f != nil {
			f(*rep.Live)
		}
		return
	}
	ch := c.pending[rep.ID]
	delete(c.pending, rep.ID)
	delete(c.usage, rep.ID)
	c.mu.Unlock()
	if ch != nil {
		ch <- rep.Report // buffered
	}
}

// failPending closes the channels of the runs the runner never answered.
func (c *runnerClient) failPending() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
		delete(c.usage, id)
	}
	_ = c.stdin.Close()
}

func (c *runnerClient) exited() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// usable reports whether runs may be started on the runner: it lives and
// did not say it is stopping.
func (c *runnerClient) usable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.retired && !c.exited()
}

// closeGrace is how long CloseRunners waits for a runner to end its runs
// and exit once its stdin is closed, before it kills it (its tagged
// processes are then killed by its host, as for a runner that died).
const closeGrace = 10 * time.Second

// awaitEnd waits until the runner has exited and been reaped, killing it
// after closeGrace.
func (c *runnerClient) awaitEnd() {
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(closeGrace)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	}
	c.mu.Lock()
	if !c.exited() {
		_ = syscall.Kill(c.pid, syscall.SIGKILL)
	}
	c.mu.Unlock()
	<-done
}

// start sends a start request and returns the run's id and the channel its
// report arrives on (closed if the runner dies first). usage, when not nil,
// receives the run's live usage reports until then.
func (c *runnerClient) start(cfg helperConfig, usage func(Usage)) (uint64, <-chan helperReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exited() {
		return 0, nil, fmt.Errorf("%w: %w", ErrHelper, errRunnerGone)
	}
	c.nextID++
	id, ch := c.nextID, make(chan helperReport, 1)
	if err := c.send(runnerRequest{Op: "start", ID: id, Config: &cfg}); err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrHelper, err)
	}
	c.pending[id] = ch
	if usage != nil {
		c.usage[id] = usage
	}
	return id, ch, nil
}

// cancel asks the runner to cancel run id. A runner someone stopped
// (SIGSTOP) would never read the request: it is continued first.
func (c *runnerClient) cancel(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resume()
	_ = c.send(runnerRequest{Op: "cancel", ID: id})
}

// resume continues the runner if someone stopped it; c.mu is held.
func (c *runnerClient) resume() {
	if c.pid > 0 && !c.exited() {
		_ = syscall.Kill(c.pid, syscall.SIGCONT)
	}
}

// retire marks the runner as one not to start runs on any more (it said
// it is stopping): runnerFor then starts a new one.
func (c *runnerClient) retire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.retired = true
}

// send writes one request; c.mu is held.
func (c *runnerClient) send(req runnerRequest) error { return c.enc.Encode(req) }

// tailBuffer keeps the last n bytes written to it; it is safe for
// concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	n   int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if extra := t.buf.Len() - t.n; extra > 0 {
		t.buf.Next(extra)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}
