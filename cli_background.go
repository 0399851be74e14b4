package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/tui"
)

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
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	if b = bytes.TrimSpace(b); len(b) == 0 {
		return "(nothing)"
	}
	return string(bytes.ReplaceAll(b, []byte("\n"), []byte(" · ")))
}
