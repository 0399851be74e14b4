package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

// stdio is a target's standard files: /dev/null, which the server opens
// once for every run, and the run's two log files.
type stdio struct{ in, out, err *os.File }

func (w *watchdog) openStdio() (stdio, error) {
	in, err := w.srv.devNull()
	if err != nil {
		return stdio{}, fmt.Errorf("helper: %w", err)
	}
	s := stdio{in: in}
	if s.out, err = createLog(w.cfg.Stdout); err != nil {
		return stdio{}, err
	}
	if s.err, err = createLog(w.cfg.Stderr); err != nil {
		_ = s.out.Close()
		return stdio{}, err
	}
	return s, nil
}

func createLog(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, logMode)
	if err != nil {
		return nil, fmt.Errorf("helper: %w", err)
	}
	return f, nil
}

// fds lists the descriptors for the target's fds 0, 1 and 2.
func (s stdio) fds() []uintptr { return []uintptr{s.in.Fd(), s.out.Fd(), s.err.Fd()} }

// close closes the run's own files (the logs).
func (s stdio) close() {
	_ = s.out.Close()
	_ = s.err.Close()
}
