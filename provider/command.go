package provider

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Command runs any executable as the agent (contract section 11).
type Command struct {
	Backend    string   // "command" or "scripted"
	Executable string   // the program
	Args       []string // fixed leading arguments
	Grace      time.Duration
}

// Name is the agent backend.
func (c *Command) Name() string { return c.Backend }

// RunTurn starts the program in its own process group with the prompt on
// stdin, waits for it, and stops its whole process tree when ctx ends or the
// turn allowance passes (SIGTERM, grace, SIGKILL) and when it exits.
func (c *Command) RunTurn(ctx context.Context, t Turn) (Outcome, error) {
	out, err := RunLaunch(ctx, t, Launch{Executable: c.Executable, Args: c.Args, Prompt: t.Prompt,
		Stdin: strings.NewReader(t.Prompt), Grace: c.Grace})
	if err != nil {
		return out, err
	}
	if ctx.Err() == nil {
		out.Failure = Classify(out.ExitCode, out.TimedOut, out.StderrTail, nil)
	}
	return out, nil
}

func (c *Command) wait(ctx context.Context, cmd *exec.Cmd, m mark, allowance time.Duration) (bool, error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(allowance)
	defer timer.Stop()
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
		return false, c.stop(cmd, m, done, StopGrace)
	case <-timer.C:
		grace := c.Grace
		if grace == 0 {
			grace = AllowanceGrace
		}
		return true, c.stop(cmd, m, done, grace)
	}
}

// Graces between SIGTERM and SIGKILL of an agent's process tree: short when
// the study stops (pause and cancel act within 1 s), longer at the end of a
// turn's allowance so the agent can save its session. PipeGrace is how long
// a turn whose agent exited waits for the output its descendants still
// hold open (exec.Cmd.WaitDelay): the turn ends when the agent exits.
const (
	StopGrace      = 400 * time.Millisecond
	AllowanceGrace = 5 * time.Second
	PipeGrace      = 500 * time.Millisecond
)

// stop signals the agent's group and every process bearing its mark (the
// descendants that left the group included): SIGTERM, then SIGKILL after
// grace or as soon as the agent has exited.
func (c *Command) stop(cmd *exec.Cmd, m mark, done <-chan error, grace time.Duration) error {
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	m.signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		m.signal(syscall.SIGKILL)
		err = <-done
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return err
}

func turnEnv(t Turn) []string {
	env := make([]string, 0, len(os.Environ())+len(t.Env)+2)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := t.Env[k]; !over && !strings.HasPrefix(k, "SIMJECTURE_") {
			env = append(env, kv)
		}
	}
	for k, v := range t.Env {
		env = append(env, k+"="+v)
	}
	if _, set := t.Env["SIMJECTURE_ROLE"]; !set { // the scientific modes name the role of the assignment
		env = append(env, "SIMJECTURE_ROLE="+t.Role)
	}
	return append(env, "SIMJECTURE_TURN="+strconv.Itoa(t.Number))
}

func openLogs(dir string) (*os.File, *os.File, error) {
	out, err := CreateNew(filepath.Join(dir, "stdout.log"), 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("turn log: %w", err)
	}
	errf, err := CreateNew(filepath.Join(dir, "stderr.log"), 0o644)
	if err != nil {
		_ = out.Close()
		return nil, nil, fmt.Errorf("turn log: %w", err)
	}
	return out, errf, nil
}

// exitCode is the agent's exit status: 128+signal when a signal ended it,
// -1 when it is unknown. An agent that exited while descendants held its
// output open has a ProcessState although Wait returned exec.ErrWaitDelay.
func exitCode(cmd *exec.Cmd, err error) int {
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ps.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

// LastLine is the last non-empty line of s, trimmed: where an agent prints
// its verdict.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// tailBuffer keeps the last n bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	n   int
}

func newTail(n int) *tailBuffer { return &tailBuffer{n: n} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.n {
		b = b[len(b)-t.n:]
	}
	return string(bytes.Clone(b))
}

// cappedWriter writes at most n bytes and silently drops the rest, so a
// chatty agent cannot fill the disk; the tail buffer keeps the end.
type cappedWriter struct {
	w io.Writer
	n int64
}

func capped(w io.Writer, n int64) io.Writer { return &cappedWriter{w: w, n: n} }

func (c *cappedWriter) Write(p []byte) (int, error) {
	if c.n <= 0 {
		return len(p), nil
	}
	q := p
	if int64(len(q)) > c.n {
		q = q[:c.n]
	}
	n, err := c.w.Write(q)
	c.n -= int64(n)
	if err != nil {
		return n, err
	}
	return len(p), nil
}
