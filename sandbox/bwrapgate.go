package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"
)

// launchBwrap starts bwrap itself as the target, without the shell barrier:
// bwrap reports the pid of the child that will run the experiment on
// --info-fd and holds that child on --block-fd, before it forks the
// experiment, until the limits are set on it with prlimit(2). The child's
// experiment inherits them, as it would from the barrier; bwrap's own
// process gets them too. This saves a shell start per experiment.
func (w *watchdog) launchBwrap() error {
	files, err := w.openStdio()
	if err != nil {
		return err
	}
	defer files.close()
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("helper: %w", err)
	}
	defer infoR.Close()
	blockR, blockW, err := os.Pipe()
	if err != nil {
		_ = infoW.Close()
		return fmt.Errorf("helper: %w", err)
	}
	defer blockW.Close()
	argv := append([]string{w.cfg.Argv[0], "--info-fd", "3", "--block-fd", "4"}, w.cfg.Argv[1:]...)
	sys := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	w.attach(sys)
	attr := &syscall.ProcAttr{Dir: w.cfg.Dir, Env: w.cfg.Env, Sys: sys,
		Files: append(files.fds(), infoW.Fd(), blockR.Fd())}
	pid, err := w.srv.forkTarget(w, func() (int, error) { return syscall.ForkExec(argv[0], argv, attr) })
	_ = infoW.Close() // only bwrap may hold the write end, so its EOF arrives
	_ = blockR.Close()
	if err != nil {
		return fmt.Errorf("helper: start: %w", err)
	}
	w.target = pid
	if err := w.limit(pid); err != nil {
		return err
	}
	child, err := bwrapChild(infoR)
	if err != nil {
		return nil // bwrap failed before its child existed; its exit and stderr say why
	}
	if err := w.limit(child); err != nil {
		return err
	}
	if _, err := blockW.Write([]byte{1}); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return fmt.Errorf("helper: release the experiment: %w", err)
	}
	return nil
}

// limit sets the run's limits on pid, killing the target if that fails.
func (w *watchdog) limit(pid int) error {
	if err := setLimits(pid, w.cfg.CPULimit, w.cfg.FsizeLimit, w.cfg.ASLimit, w.tag()); err != nil {
		_ = syscall.Kill(w.target, syscall.SIGKILL)
		return fmt.Errorf("helper: %w", err)
	}
	return nil
}

// bwrapChild reads bwrap's --info-fd report (a JSON object, then EOF).
func bwrapChild(r io.Reader) (int, error) {
	body, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return 0, fmt.Errorf("bwrap info: %w", err)
	}
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.Unmarshal(body, &info); err != nil || info.ChildPID <= 0 {
		return 0, fmt.Errorf("bwrap info %q: %v", body, err)
	}
	return info.ChildPID, nil
}
