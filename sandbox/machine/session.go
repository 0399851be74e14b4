package machine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// ErrRefused is a worker's refusal of a request (a semantic error).
var ErrRefused = errors.New("worker refused")

// helloTimeout bounds connecting and the protocol check.
const helloTimeout = 30 * time.Second

// session is one long-lived `worker serve` over ssh.
type session struct {
	cmd    *exec.Cmd
	w      *frameWriter
	closer io.Closer
	stderr *tailBuffer
	t      sshTarget
	hello  helloReply

	mu      sync.Mutex
	seq     uint64
	pending map[uint64]*waiter
	dead    chan struct{}
	err     error
}

// dial starts a session and checks the protocol version.
func dial(ctx context.Context, t sshTarget, sum string) (*session, error) {
	cmd, err := t.command(context.WithoutCancel(ctx), t.serveCommand(sum))
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	s := newSession(t, cmd, stdin)
	cmd.Stderr = s.stderr
	if err := startLocked(cmd, s.dead); err != nil {
		return nil, fmt.Errorf("ssh: %w: %w", err, ErrUnreachable)
	}
	go s.read(stdout)
	if err := s.greet(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// newSession is a session writing to w; cmd (the ssh process) may be nil
// when the stream is not a process's.
func newSession(t sshTarget, cmd *exec.Cmd, w io.WriteCloser) *session {
	return &session{cmd: cmd, w: newFrameWriter(w), closer: w, stderr: &tailBuffer{}, t: t,
		pending: map[uint64]*waiter{}, dead: make(chan struct{})}
}

// greet checks the protocol version; a failure closes the session.
func (s *session) greet(ctx context.Context) error {
	t := s.t
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	if err := s.call(hctx, opHello, helloArgs{Protocol: Protocol, Backend: t.p.ExecutionBackend}, &s.hello); err != nil {
		s.close()
		return err
	}
	if s.hello.Protocol != Protocol {
		s.close()
		return fmt.Errorf("worker %s speaks %q, not %q (run: simjecture worker prepare %s): %w", t.p.ID, s.hello.Protocol, Protocol, t.p.ID, ErrRefused)
	}
	return nil
}

// startLocked starts cmd on a locked OS thread, so its parent-death signal
// fires when this process dies rather than when the thread ends; until
// must close only once cmd was reaped.
func startLocked(cmd *exec.Cmd, until <-chan struct{}) error {
	done := make(chan error, 1)
	go func() {
		// Locked while the process runs, the thread cannot be ended by
		// another goroutine (one that returns locked ends its thread);
		// unlocked once the process was reaped, it is never ended by this
		// one either: a thread's end fires the parent-death signal of
		// every child forked on it, also those other goroutines forked
		// there before (an agent's launcher, another ssh).
		lockThread()
		defer unlockThread()
		err := cmd.Start()
		done <- err
		if err == nil {
			<-until
		}
	}()
	return <-done
}

// read dispatches reply frames to their callers until the stream ends.
func (s *session) read(r io.Reader) {
	var err error
	for {
		var f frame
		if f, err = readFrame(r); err != nil {
			break
		}
		s.mu.Lock()
		w := s.pending[f.Seq]
		s.mu.Unlock()
		if w == nil {
			if f.Seq == 0 && f.Error != "" { // the serve process refused the session
				err = fmt.Errorf("worker %s: %s: %w", s.t.p.ID, f.Error, ErrRefused)
				break
			}
			continue
		}
		select {
		case w.ch <- f:
		case <-w.gone: // its caller stopped listening
		}
	}
	if s.cmd != nil {
		_ = s.cmd.Wait()
	}
	s.mu.Lock()
	if !errors.Is(err, ErrRefused) {
		err = s.t.explain(errors.Join(err, errors.New("session ended")), s.stderr.String())
	}
	s.err = err
	s.mu.Unlock()
	close(s.dead)
}

// alive reports whether the session still runs.
func (s *session) alive() bool {
	select {
	case <-s.dead:
		return false
	default:
		return true
	}
}

func (s *session) close() {
	_ = s.closer.Close()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.dead
}

// waiter is one request's replies; gone closes when its caller stops
// listening, so a reply stream never blocks the session's reader.
type waiter struct {
	ch   chan frame
	gone chan struct{}
}

// open registers a new request and returns its sequence number and replies.
func (s *session) open() (uint64, chan frame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	w := &waiter{ch: make(chan frame, 64), gone: make(chan struct{})}
	s.pending[s.seq] = w
	return s.seq, w.ch
}

func (s *session) forget(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.pending[seq]; ok {
		close(w.gone)
		delete(s.pending, seq)
	}
}

func (s *session) deadErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// next waits for the next frame of a request.
func (s *session) next(ctx context.Context, ch chan frame) (frame, error) {
	select {
	case f := <-ch:
		return f, nil
	case <-s.dead:
		select {
		case f := <-ch:
			return f, nil
		default:
		}
		return frame{}, s.deadErr()
	case <-ctx.Done():
		return frame{}, fmt.Errorf("worker %s: %w: %w", s.t.p.ID, ctx.Err(), ErrUnreachable)
	}
}

// call sends one request and decodes its one reply into out.
func (s *session) call(ctx context.Context, op string, args, out any) error {
	seq, ch := s.open()
	defer s.forget(seq)
	if err := s.w.write(frame{Seq: seq, Op: op, Body: body(args)}, true); err != nil {
		return fmt.Errorf("worker %s: %w: %w", s.t.p.ID, err, ErrUnreachable)
	}
	f, err := s.next(ctx, ch)
	if err != nil {
		return err
	}
	return decodeReply(s.t.p.ID, op, f, out)
}

func decodeReply(id, op string, f frame, out any) error {
	if f.Error != "" {
		return fmt.Errorf("worker %s: %s: %w", id, f.Error, ErrRefused)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(f.Body, out); err != nil {
		return fmt.Errorf("worker %s: %s reply: %w: %w", id, op, err, ErrUnreachable)
	}
	return nil
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if b.buf.Len() > 4096 {
		rest := b.buf.Bytes()[b.buf.Len()-4096:]
		b.buf = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
