package sandbox

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// A target's exit reaches its watchdog two ways: the watchdog's own watcher
// wakes on the target's pidfd in Go's poller and collects it itself, or the
// reaper collects it — at a sample, or on SIGCHLD where that is relayed
// (chld.go: always where pidfds cannot be watched). Whichever comes first
// under the server's lock delivers the status.

// attach completes a target's SysProcAttr: it starts in the run's cgroup,
// and the kernel returns a pidfd of it in w.pidfd (-1 where unsupported).
func (w *watchdog) attach(sys *syscall.SysProcAttr) *syscall.SysProcAttr {
	w.cg.attach(sys)
	w.pidfd = -1
	sys.PidFD = &w.pidfd
	return sys
}

// watchExit starts the watcher on the target's pidfd and returns the
// function that stops it and waits for it. Without a pidfd (or a poller
// that takes it), the reaper alone collects the target.
func (w *watchdog) watchExit() (stop func()) {
	fd := w.pidfd
	w.pidfd = -1
	if fd < 0 {
		return func() {}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return func() {}
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if rc.Read(pidExited) == nil {
			w.srv.reapTarget(w)
		}
	}()
	return func() {
		_ = f.Close() // ends a pending wait
		<-done
	}
}

// pidExited reports whether the pidfd is readable: its process has ended.
func pidExited(fd uintptr) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, 0)
	return err == nil && n > 0 && p[0].Revents&unix.POLLIN != 0
}

// reapTarget collects w's target if the reaper has not already, and hands
// its status to the watchdog.
func (s *server) reapTarget(w *watchdog) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid := w.target
	if pid <= 0 || s.targets[pid] != w {
		return
	}
	var r waitResult
	for {
		got, err := syscall.Wait4(pid, &r.ws, syscall.WNOHANG, &r.ru)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || got != pid {
			return
		}
		break
	}
	delete(s.targets, pid)
	w.exit <- r // buffered: one status per target
}
