package machine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// daemon owns a worker's experiments. Sessions (one per coordinator
// connection, relayed by `worker serve`) come and go; the daemon outlives
// them, so a dropped connection loses nothing. Without a session for the
// grace, it stops its running experiments (the coordinator died) and,
// with nothing left to do, exits.
type daemon struct {
	root  string // ROOT/state
	grace time.Duration
	self  string
	log   *slog.Logger

	capMu  sync.Mutex     // held while ROOT/capabilities is read or changed
	capUse map[string]int // runtime folder → running jobs using it; under capMu

	mu       sync.Mutex
	sessions int
	conns    map[net.Conn]struct{} // the sessions' connections
	stopping bool                  // set once by shutdown: no job starts after it
	stopWhy  string                // why, recorded as the reason of a job refused a start
	jobs     map[string]*job
	probes   map[sandbox.Backend]sandbox.Report // available backends, probed once
	idleFrom time.Time                          // when the last session left
	wg       sync.WaitGroup
}

// stateDir is where a worker keeps its state under its root.
func stateDir(root string) string { return filepath.Join(root, "state") }

func socketPath(state string) string { return filepath.Join(state, "run", "daemon.sock") }

// DaemonMain runs the daemon of root until it has been idle for the grace,
// or until ctx ends (SIGTERM or SIGINT): it then stops every running job,
// recording it lost with the reason, ends its sessions and returns once
// the jobs' processes are gone.
func DaemonMain(ctx context.Context, root string, grace time.Duration) error {
	if os.Geteuid() == 0 {
		return fmt.Errorf("the worker daemon never runs as root (use --run-as): %w", ErrInvalid)
	}
	state := stateDir(root)
	for _, d := range []string{"run", "jobs", "blobs", "runs", "collected"} {
		if err := ensurePrivateDir(filepath.Join(state, d)); err != nil {
			return err
		}
	}
	lock, err := os.OpenFile(filepath.Join(state, "run", "daemon.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("daemon lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // another daemon serves this root
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	d := &daemon{root: state, grace: grace, self: self, jobs: map[string]*job{}, probes: map[sandbox.Backend]sandbox.Report{}, idleFrom: time.Now(),
		log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	d.reconcile()
	d.reconcileCollected()
	d.pruneCapabilities()
	return d.serve(ctx)
}

func (d *daemon) serve(parent context.Context) error {
	sock := socketPath(d.root)
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go d.watchIdle(ctx, ln)
	go func() {
		select {
		case <-parent.Done():
			d.shutdown(ln, "the worker's daemon was stopped (SIGTERM or SIGINT): the experiment was stopped, or not started, and is not rerun")
		case <-ctx.Done():
		}
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			break
		}
		if !d.track(conn, true) {
			_ = conn.Close() // accepted as shutdown began
			continue
		}
		d.attach(+1)
		d.wg.Go(func() {
			defer d.attach(-1)
			defer d.track(conn, false)
			d.session(conn)
		})
	}
	d.wg.Wait()
	// The run folders of the jobs just ended are removed (or made spares)
	// in the background: done before the daemon returns, so that nothing
	// writes in its state folder afterwards (a test's clean-up of it once
	// found a spare being made there).
	sandbox.Settle()
	return nil
}

// track adds (or removes) a session's connection; it refuses a new one
// once shutdown has begun.
func (d *daemon) track(conn net.Conn, add bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !add {
		delete(d.conns, conn)
		return true
	}
	if d.stopping {
		return false
	}
	if d.conns == nil {
		d.conns = map[net.Conn]struct{}{}
	}
	d.conns[conn] = struct{}{}
	return true
}

// shutdown stops the daemon: no job starts any more (one asked to is
// recorded lost with reason), every running one is stopped and recorded
// lost with reason, and once they have ended — the sessions still up, so
// their coordinators learn it — the listener and every session's
// connection are closed.
func (d *daemon) shutdown(ln net.Listener, reason string) {
	d.mu.Lock()
	d.stopping, d.stopWhy = true, reason
	var running []*job
	for _, j := range d.jobs {
		if j.active() {
			running = append(running, j)
		}
	}
	conns := make([]net.Conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
	d.mu.Unlock()
	d.log.Info("daemon stopping", "reason", "signal", "running_jobs", len(running))
	// Sessions accepted from here on are closed at once (track refuses them).
	for _, j := range running {
		j.orphan(reason)
	}
	for _, j := range running {
		<-j.done // the runner stops its tree within its grace (SIGKILL after 2 s)
	}
	_ = ln.Close()
	for _, c := range conns {
		_ = c.Close()
	}
}

func (d *daemon) attach(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sessions += n
	if d.sessions == 0 {
		d.idleFrom = time.Now()
	}
}

// watchIdle stops orphaned experiments after the grace without a session,
// and closes the listener once nothing runs and nobody is attached.
func (d *daemon) watchIdle(ctx context.Context, ln net.Listener) {
	t := time.NewTicker(min(d.grace/4+10*time.Millisecond, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		orphaned, idle := d.idleState()
		for _, j := range orphaned {
			j.orphan(fmt.Sprintf("no coordinator attached for %s: the worker stopped the orphaned experiment", d.grace))
		}
		if idle {
			_ = ln.Close()
			return
		}
	}
}

func (d *daemon) idleState() (orphaned []*job, idle bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sessions > 0 || time.Since(d.idleFrom) < d.grace {
		return nil, false
	}
	for _, j := range d.jobs {
		if j.active() {
			orphaned = append(orphaned, j)
		}
	}
	return orphaned, len(orphaned) == 0 && d.runningCount() == 0
}

// runningCount is the jobs whose process has not ended; d.mu held.
func (d *daemon) runningCount() int {
	n := 0
	for _, j := range d.jobs {
		if j.active() {
			n++
		}
	}
	return n
}

// session serves one coordinator connection until it closes.
func (d *daemon) session(conn net.Conn) {
	defer conn.Close()
	w := newFrameWriter(conn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := map[string]*upload{}
	defer func() {
		for _, u := range up {
			u.abort()
		}
	}()
	for {
		f, err := readFrame(conn)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				d.log.Warn("session ended", "err", err)
			}
			return
		}
		if f.Op == opPut {
			d.put(w, up, f)
			continue
		}
		d.wg.Go(func() { d.handle(ctx, w, f) })
	}
}

// handle answers one request.
func (d *daemon) handle(ctx context.Context, w *frameWriter, f frame) {
	var res any
	var err error
	switch f.Op {
	case opHello:
		res, err = d.hello(ctx, f)
	case opCreate:
		res, err = d.create(f)
	case opStart:
		res, err = d.start(f)
	case opWait:
		res, err = d.wait(ctx, f)
	case opStatus:
		res, err = d.status(f)
	case opCancel:
		res, err = d.cancel(f)
	case opRelease:
		res, err = d.release(f)
	case opCapability:
		res, err = d.installCapability(f)
	case opFetch:
		err = d.fetch(w, f)
		if err == nil {
			return
		}
	default:
		err = fmt.Errorf("unknown worker operation %q", f.Op)
	}
	reply := frame{Seq: f.Seq, Op: opReply, Final: true}
	if err != nil {
		reply.Error = err.Error()
	} else {
		reply.Body = body(res)
	}
	if werr := w.write(reply, true); werr != nil {
		d.log.Warn("reply lost", "op", f.Op, "err", werr)
	}
}
