package machine

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Every ssh of this process to one worker goes over one master connection
// this process owns: `ssh -M -N` started as our child with a parent-death
// signal, on a thread locked until the master was reaped (startLocked),
// so it dies with us, never later. Its socket is named by our pid, so one
// supervisor's death never breaks another's connection. The clients ask for
// no master (ControlMaster=no) and nothing persists (no ControlPersist), so
// no ssh forks a master into the background, out of our reach; a client
// ends when its master does.

// masters are this process's master connections by control socket.
var masters = struct {
	sync.Mutex
	m map[string]*master
}{m: map[string]*master{}}

// sweepOnce removes, once per process, the sockets of dead processes.
var sweepOnce sync.Once

// readyLine is what the master's LocalCommand prints: ssh runs it once the
// connection is up and its control socket listens.
const readyLine = "simjecture-master-ready"

// master is one `ssh -M -N` of ours.
type master struct {
	ready chan struct{} // closed once its socket listens, or it failed
	done  chan struct{} // closed once its process was reaped
	err   error         // why it did not come up; set before ready closes
}

// ended reports whether the master's process was reaped.
func (m *master) ended() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// controlPath is the socket of this process's master to t: our pid and a
// hash of what the connection is (short: a socket path has 108 bytes).
func (t sshTarget) controlPath() (string, error) {
	dir, err := controlDir()
	if err != nil {
		return "", err
	}
	key := strings.Join([]string{t.p.Host, strconv.Itoa(t.p.Port), t.p.User, t.p.IdentityFile, t.knownHosts()}, "\x00")
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, fmt.Sprintf("%d-%x", os.Getpid(), sum[:8])), nil
}

// master returns the socket of this process's master connection to t,
// starting one when none runs, and waits until it listens.
func (t sshTarget) master(ctx context.Context, ssh string) (string, error) {
	ctl, err := t.controlPath()
	if err != nil {
		return "", err
	}
	masters.Lock()
	m := masters.m[ctl]
	if m == nil || m.ended() {
		m = t.startMaster(ssh, ctl)
		masters.m[ctl] = m
	}
	masters.Unlock()
	select {
	case <-m.ready:
	case <-ctx.Done():
		return "", fmt.Errorf("worker %s: ssh master: %w: %w", t.p.ID, ctx.Err(), ErrUnreachable)
	}
	if m.err != nil {
		return "", m.err
	}
	return ctl, nil
}

// masterArgv is the command line of the master listening on ctl.
func (t sshTarget) masterArgv(ctl string) []string {
	a := append([]string{"-M", "-N", "-T"}, t.options()...)
	a = append(a, "-o", "ControlMaster=yes", "-o", "ControlPersist=no", "-o", "ControlPath="+ctl,
		"-o", "PermitLocalCommand=yes", "-o", "LocalCommand=echo "+readyLine)
	return append(a, "--", t.p.Host)
}

// startMaster starts the master on ctl; ready closes when it listens.
func (t sshTarget) startMaster(ssh, ctl string) *master {
	m := &master{ready: make(chan struct{}), done: make(chan struct{})}
	sweepOnce.Do(func() { sweepControlDir(filepath.Dir(ctl)) })
	_ = os.Remove(ctl) // left by a killed master, or an earlier process with our pid
	cmd := exec.Command(ssh, t.masterArgv(ctl)...)
	cmd.Env = sshEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	stderr := &tailBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = startLocked(cmd, m.done)
	}
	if err != nil {
		m.err = fmt.Errorf("worker %s: ssh master: %w: %w", t.p.ID, err, ErrUnreachable)
		close(m.ready)
		close(m.done)
		return m
	}
	go m.watch(t, cmd, stdout, stderr)
	return m
}

// watch closes ready at the master's ready line, or with the reason it
// ended before (done first then, so a master that failed is never taken
// for one that runs), and reaps it.
func (m *master) watch(t sshTarget, cmd *exec.Cmd, stdout io.Reader, stderr *tailBuffer) {
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	up := strings.TrimSpace(line) == readyLine
	if up {
		close(m.ready)
	}
	err := cmd.Wait()
	if !up {
		if err == nil {
			err = errors.New("ssh master ended before it connected")
		}
		m.err = t.explain(err, stderr.String())
		close(m.done) // before ready: whoever sees the failure sees it ended
		close(m.ready)
		return
	}
	close(m.done)
}

// sweepControlDir removes the sockets of masters whose process is gone
// (killed with it: SIGKILL leaves the socket file).
func sweepControlDir(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.SplitN(e.Name(), "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() || !strings.Contains(e.Name(), "-") {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
