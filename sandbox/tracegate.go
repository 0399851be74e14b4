package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// launchTraced starts the launcher (PRoot, or the experiment's own program)
// without the shell barrier: the child asks to be traced before its exec, so
// the kernel stops it right after the exec, before its first instruction;
// the runner sets its limits with prlimit(2) and detaches, which lets it run.
// It reports false, starting nothing, where tracing is not allowed (then the
// barrier is used) or the program cannot be found (the barrier's shell then
// reports it the usual way).
func (w *watchdog) launchTraced(files stdio) (bool, error) {
	path, ok := lookPathEnv(w.cfg.Argv[0], w.cfg.Env, w.cfg.Dir)
	if !ok {
		return false, nil
	}
	sys := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Ptrace: true}
	w.attach(sys)
	attr := &syscall.ProcAttr{Dir: w.cfg.Dir, Env: w.cfg.Env, Sys: sys,
		Files: files.fds()}
	var early *waitResult
	pid, err := w.srv.forkTarget(w, func() (int, error) {
		// ptrace requests must come from the thread that started the child.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pid, err := syscall.ForkExec(path, w.cfg.Argv, attr)
		if err != nil {
			return 0, &os.PathError{Op: "fork/exec", Path: path, Err: err}
		}
		early, err = w.releaseTraced(pid)
		return pid, err
	})
	switch {
	case pid == 0 && errors.Is(err, syscall.EPERM):
		return false, nil // tracing is not allowed here
	case err != nil:
		return true, err
	}
	w.target = pid
	if early != nil { // it ended before it could be stopped: hand over its status
		w.srv.forget(pid)
		w.exit <- *early
	}
	return true, nil
}

// releaseTraced waits for the stop after the exec, sets the limits and
// detaches. A child that ended instead returns its status.
func (w *watchdog) releaseTraced(pid int) (*waitResult, error) {
	var r waitResult
	for {
		_, err := syscall.Wait4(pid, &r.ws, syscall.WALL, &r.ru)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	if !r.ws.Stopped() {
		return &r, nil
	}
	if err := setLimits(pid, w.cfg.CPULimit, w.cfg.FsizeLimit, w.cfg.ASLimit, w.tag()); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = syscall.PtraceDetach(pid)
		return nil, err
	}
	return nil, syscall.PtraceDetach(pid)
}

// lookPathEnv finds name as the target's own PATH (in env) would, relative
// names against dir.
func lookPathEnv(name string, env []string, dir string) (string, bool) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return name, isExecutable(name)
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if p := filepath.Join(d, name); isExecutable(p) {
			return p, true
		}
	}
	return "", false
}

func isExecutable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0
}
