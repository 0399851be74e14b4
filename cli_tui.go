package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/tui"
)

// cmdTUI starts the terminal UI: the home screen, or with --campaign the
// dashboard of one study (attached to its supervisor, if another process
// runs it).
func cmdTUI(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("tui", io)
	campaign := fs.String("campaign", "", "open the dashboard of the study in this folder")
	readOnly := fs.Bool("read-only", false, "watch only: disable pause, resume, cancel and new studies")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	if !interactive(io) {
		return fail(io, fmt.Errorf("the terminal UI needs a terminal; use `simjecture status`, `watch` or `--batch`: %w", errUsage))
	}
	opt := tuiOptions(io)
	opt.ReadOnly = *readOnly
	if *campaign != "" {
		c, err := engine.NewCampaign(*campaign)
		if err != nil {
			return fail(io, err)
		}
		if !c.Exists() {
			return fail(io, c.NoStudy(ctx))
		}
		opt.Campaign = c.Dir
	} else if err := checkWorkspace(); err != nil {
		return fail(io, err) // the home screen lists the workspace
	}
	if _, err := tui.Run(ctx, opt); err != nil && !errors.Is(err, context.Canceled) {
		return fail(io, err)
	}
	return exitOK
}

// tuiOptions wires the UI to this binary: launching a supervisor with the
// study's agent, and creating the demo.
func tuiOptions(io stdio) tui.Options {
	def := preselectable(os.Getenv("SIMJECTURE_DEFAULT_EXECUTION_BACKEND"))
	return tui.Options{
		Root: workspaceRoot(), DefaultBackend: def, In: io.in, Out: io.out,
		Launch: launchSupervisor, Detach: detachSelf,
		Demo: func(ctx context.Context) (string, error) {
			c, err := engine.NewCampaign(newDemoDir())
			if err != nil {
				return "", err
			}
			return c.Dir, createDemo(ctx, c, "minimal")
		},
	}
}

// detachSelf starts a detached `resume --batch` of this binary for the
// study in dir: the TUI's "leave it running in the background".
func detachSelf(dir string) (tui.Detached, error) {
	self, err := os.Executable()
	if err != nil {
		return tui.Detached{}, fmt.Errorf("find own binary: %w", err)
	}
	return detachSupervisor(self, dir)
}

// launchSupervisor opens a supervisor for the study in dir with the agent
// of its frozen contract.
func launchSupervisor(ctx context.Context, dir string) (*engine.Supervisor, error) {
	c, err := engine.NewCampaign(dir)
	if err != nil {
		return nil, err
	}
	return openStudy(ctx, c)
}

// backgroundLog is the output of a supervisor the TUI left running, under
// DIR/supervisor/; each hand-over appends to it.
const backgroundLog = "background.log"

// detachSupervisor starts exe (this binary) as `resume --campaign DIR
// --batch` in a session of its own, with stdin from /dev/null and its
// output appended to DIR/supervisor/background.log, so that it survives
// this process and the SIGHUP of a closing terminal. The TUI does not wait
// for it: a goroutine reaps it and reports its exit, with the tail of the
// log, on Exited.
func detachSupervisor(exe, dir string) (tui.Detached, error) {
	c, err := engine.NewCampaign(dir)
	if err != nil {
		return tui.Detached{}, err
	}
	if err := os.MkdirAll(c.Supervisor(), 0o755); err != nil {
		return tui.Detached{}, fmt.Errorf("background supervisor log: %w", err)
	}
	logPath := filepath.Join(c.Supervisor(), backgroundLog)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return tui.Detached{}, fmt.Errorf("background supervisor log: %w", err)
	}
	defer logf.Close() // the child holds its own copy
	null, err := os.Open(os.DevNull)
	if err != nil {
		return tui.Detached{}, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer null.Close()
	cmd := exec.Command(exe, "resume", "--campaign", c.Dir, "--batch")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return tui.Detached{}, fmt.Errorf("start %s: %w", exe, err)
	}
	exited := make(chan error, 1)
	// Not owned by the TUI's runtime on purpose: it only reaps a process
	// that outlives the UI, and ends with this process at the latest.
	go func() {
		err := cmd.Wait()
		if err == nil {
			err = errors.New("exit status 0")
		}
		exited <- fmt.Errorf("%w: %s", err, logTail(logPath, 300))
	}()
	return tui.Detached{PID: cmd.Process.Pid, Exited: exited, Stop: func() { _ = cmd.Process.Signal(syscall.SIGTERM) }}, nil
}

// logTail is the last n bytes of the file at path, trimmed, or a note
// saying why it cannot be read.
func logTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "(" + err.Error() + ")"
	}
	buf := make([]byte, min(n, st.Size()))
	k, _ := f.ReadAt(buf, st.Size()-int64(len(buf)))
	if b := bytes.TrimSpace(buf[:k]); len(b) > 0 {
		return string(bytes.ReplaceAll(b, []byte("\n"), []byte(" · ")))
	}
	return "(nothing)"
}
