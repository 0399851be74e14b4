package provider

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Launch is one agent subprocess of a turn, for backends that build their
// own command line (codex). It runs exactly like the command backend's
// agent: in the turn's folder and environment, in its own process group,
// with prompt.txt, stdout.log and stderr.log in the turn's LogDir (new
// files: a name that exists there, a symlink included, is refused), and it is
// stopped (SIGTERM, grace, SIGKILL to its process tree) when ctx ends or the
// turn allowance passes. The launch ends when the agent exits: output its
// descendants hold open is cut after PipeGrace, and whatever of its tree is
// left (setsid children included, see mark) is killed before RunLaunch
// returns.
type Launch struct {
	Executable string
	Args       []string
	Prompt     string    // kept as prompt.txt
	Stdin      io.Reader // nil: /dev/null
	Events     io.Writer // optional: also receives stdout as it arrives
	Grace      time.Duration
}

// RunLaunch runs l for turn t and waits for it. The Outcome carries the exit
// status, TimedOut (a turn cut at its allowance: a checkpoint, not a
// failure), the duration and the output tails; classifying a failure is the
// caller's, since only it knows the protocol's error events.
func RunLaunch(ctx context.Context, t Turn, l Launch) (Outcome, error) {
	if err := EnsureDir(t.LogDir, 0o755); err != nil {
		return Outcome{}, fmt.Errorf("turn log folder: %w", err)
	}
	if err := WriteNew(filepath.Join(t.LogDir, "prompt.txt"), []byte(l.Prompt), 0o644); err != nil {
		return Outcome{}, fmt.Errorf("write prompt: %w", err)
	}
	stdout, stderr, err := openLogs(t.LogDir)
	if err != nil {
		return Outcome{}, err
	}
	defer stdout.Close()
	defer stderr.Close()
	outTail, errTail := newTail(64<<10), newTail(16<<10)
	sinks := []io.Writer{capped(stdout, 64<<20), outTail}
	if l.Events != nil {
		sinks = append(sinks, l.Events)
	}
	argv := t.argv(l.Executable, l.Args)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = t.Dir
	cmd.Env = turnEnv(t)
	cmd.WaitDelay = PipeGrace
	cmd.Stdin = l.Stdin
	cmd.Stdout = io.MultiWriter(sinks...)
	cmd.Stderr = io.MultiWriter(capped(stderr, 16<<20), errTail)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	m := newMark()
	if err := startMarked(cmd, m); err != nil {
		return Outcome{}, fmt.Errorf("start agent %s: %w", l.Executable, err)
	}
	timedOut, werr := (&Command{Grace: l.Grace}).wait(ctx, cmd, m, t.Timeout)
	gone := m.kill()
	out := Outcome{TimedOut: timedOut, Duration: time.Since(start), StdoutTail: outTail.String(), StderrTail: errTail.String(),
		Lingering: !gone}
	out.ExitCode = exitCode(cmd, werr)
	out.LastLine = LastLine(out.StdoutTail)
	return out, nil
}
