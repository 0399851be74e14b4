package machine

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ServeArgs are the flags of `worker serve`.
type ServeArgs struct {
	Root  string
	RunAs string
	Grace time.Duration
}

// daemonStart bounds how long serve waits for a daemon it started.
const daemonStart = 10 * time.Second

// ServeMain is `worker serve`: one coordinator session, relayed between
// stdin/stdout and the worker's daemon (started when none runs). A root
// session first drops to the run-as account; it refuses without one.
func ServeMain(a ServeArgs, in io.Reader, out io.Writer) error {
	err := serve(a, in, out)
	if err != nil { // the coordinator reads this as the session's refusal
		_ = newFrameWriter(out).write(frame{Op: opReply, Error: err.Error(), Final: true}, true)
	}
	return err
}

func serve(a ServeArgs, in io.Reader, out io.Writer) error {
	if !filepath.IsAbs(a.Root) || filepath.Clean(a.Root) != a.Root || a.Root == "/" {
		return fmt.Errorf("--root %q must be a clean absolute folder other than /: %w", a.Root, ErrInvalid)
	}
	if err := dropPrivileges(a.RunAs, a.Root); err != nil {
		return err
	}
	conn, err := connectDaemon(a)
	if err != nil {
		return err
	}
	return relay(conn.(*net.UnixConn), in, out)
}

// dropPrivileges makes a root session the run-as account: cleared
// supplementary groups, its group and user, a clean environment.
func dropPrivileges(runAs, root string) error {
	if os.Geteuid() != 0 {
		cleanEnv(root)
		return nil
	}
	if runAs == "" {
		return fmt.Errorf("this worker is reached as root and has no run-as account: experiments never run as root (simjecture worker add … --run-as ACCOUNT, then worker prepare): %w", ErrInvalid)
	}
	u, err := user.Lookup(runAs)
	if err != nil {
		return fmt.Errorf("run-as account %q: %w (run: simjecture worker prepare)", runAs, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if uid == 0 {
		return fmt.Errorf("run-as account %q is root: %w", runAs, ErrInvalid)
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("drop groups: %w", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("setgid %d: %w", gid, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("setuid %d: %w", uid, err)
	}
	if os.Geteuid() == 0 || os.Getuid() == 0 {
		return fmt.Errorf("still root after dropping to %q", runAs)
	}
	cleanEnv(root)
	return nil
}

// cleanEnv leaves only the variables the worker sets.
func cleanEnv(root string) {
	os.Clearenv()
	_ = os.Setenv("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
	_ = os.Setenv("HOME", filepath.Join(root, "home"))
	_ = os.Setenv("LANG", "C.UTF-8")
}

// connectDaemon connects to the daemon of a.Root, starting it first when
// none listens.
func connectDaemon(a ServeArgs) (net.Conn, error) {
	sock := socketPath(stateDir(a.Root))
	if c, err := net.Dial("unix", sock); err == nil {
		return c, nil
	}
	if err := startDaemon(a); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(daemonStart)
	restart := time.Now().Add(daemonRestart)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(stateDir(a.Root), "run", "daemon.log"))
			return nil, fmt.Errorf("the worker daemon did not start: %w: %s", err, tail(string(log), 500))
		}
		// A daemon that is stopping (SIGTERM, or its idle exit) holds the
		// lock without a socket: the one started for us then exits at once.
		// Start another now and then, until one takes the lock.
		if time.Now().After(restart) {
			if err := startDaemon(a); err != nil {
				return nil, err
			}
			restart = time.Now().Add(daemonRestart)
		}
		time.Sleep(20 * time.Millisecond) // polls a socket another process creates
	}
}

// daemonRestart is how often connectDaemon starts a daemon again while
// none answers.
const daemonRestart = 500 * time.Millisecond

func startDaemon(a ServeArgs) error {
	run := filepath.Join(stateDir(a.Root), "run")
	if err := ensurePrivateDir(run); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	log, err := os.OpenFile(filepath.Join(run, "daemon.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("daemon log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(self, "worker", "daemon", "--root", a.Root, "--grace", strconv.Itoa(int(a.Grace/time.Second)))
	cmd.Stdout, cmd.Stderr, cmd.Dir = log, log, "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the worker daemon: %w", err)
	}
	return cmd.Process.Release()
}

// relay copies the session's frames both ways until either side closes.
func relay(conn *net.UnixConn, in io.Reader, out io.Writer) error {
	defer conn.Close()
	up := make(chan error, 1)
	go func() {
		_, err := io.Copy(conn, in)
		_ = conn.CloseWrite()
		up <- err
	}()
	_, err := io.Copy(out, conn)
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("relay: %w", err)
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
