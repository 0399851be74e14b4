package slurmfix

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// spawn starts one daemon in the foreground as our child, in its own
// process group, killed if the test binary dies.
func (c *Cluster) spawn(name, exe string, args ...string) error {
	logPath := c.path("log", name+".out")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(exe, args...)
	cmd.Env = c.Env()
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(d.done)
	}()
	c.daemons = append(c.daemons, d)
	return nil
}

// until polls cond every 100 ms until it holds, a daemon exits, or timeout
// passes.
func (c *Cluster) until(timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		for _, d := range c.daemons {
			select {
			case <-d.done:
				return fmt.Errorf("%s exited while waiting for %s", d.name, what)
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

func (c *Cluster) mungeWorks() bool {
	cmd := exec.Command("munge", "-n", "-S", c.Socket)
	return cmd.Run() == nil
}

func (c *Cluster) nodeIdle() bool {
	out, err := c.Run("sinfo", "-h", "-n", c.Node, "-o", "%T")
	return err == nil && strings.TrimSpace(out) == "idle"
}

// QueueEmpty reports whether squeue lists no pending or running job.
func (c *Cluster) QueueEmpty() bool {
	out, err := c.Run("squeue", "-h", "-o", "%i")
	return err == nil && strings.TrimSpace(out) == ""
}

// Stop cancels every job, waits for the queue to drain, stops the daemons
// (SIGTERM, SIGKILL after 10 s) and removes the folder.
func (c *Cluster) Stop() error {
	var errs []error
	if len(c.daemons) == 3 {
		if _, err := c.Run("scancel", "--full", "--user=root"); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, c.until(30*time.Second, "the queue to drain", c.QueueEmpty))
	}
	for i := len(c.daemons) - 1; i >= 0; i-- {
		errs = append(errs, c.daemons[i].terminate())
	}
	c.daemons = nil
	c.logs = c.tails()
	if err := os.RemoveAll(c.Dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("slurmfix: stop: %w", err)
	}
	return nil
}

func (d *daemon) terminate() error {
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-d.done:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	<-d.done
	return errors.New(d.name + " ignored SIGTERM for 10 s; killed")
}

// tails is the tail of every daemon's log, for a failure message.
func (c *Cluster) tails() string {
	var b strings.Builder
	for _, name := range []string{"munge/munged.log", "log/slurmctld.log", "log/slurmd.log", "log/munged.out", "log/slurmctld.out", "log/slurmd.out"} {
		data, err := os.ReadFile(c.path(name))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", name, strings.Join(lines, "\n"))
	}
	return b.String()
}
