package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sshd is an OpenSSH server the test starts on 127.0.0.1 with its own host
// key, and the throwaway login account it created for it.
type sshd struct {
	dir        string // its folder: config, keys, known_hosts
	port       int
	login      string // the throwaway account
	key        string // the client's private key (authorized for login and root)
	knownHosts string // holds the server's host key
	cmd        *exec.Cmd
	config     string // SIMJECTURE_CONFIG for the coordinator
	addEnv     []string
	extra      []string // more sshd_config lines (e.g. SetEnv for a login node)
}

// needSSHD skips the test when it cannot start an sshd (not root, or
// openssh-server missing), saying why.
func needSSHD(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the SSH worker tests create accounts and start sshd: they need root")
	}
	for _, tool := range []string{"/usr/sbin/sshd", "ssh", "ssh-keygen", "useradd", "userdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (go tool task test installs openssh-server and openssh-client): %v", tool, err)
		}
	}
}

// startSSHD starts an sshd for this test, with extra sshd_config lines;
// cleanup stops it and removes the account.
func startSSHD(t *testing.T, extra ...string) *sshd {
	t.Helper()
	needSSHD(t)
	dir, err := os.MkdirTemp("", "sj-sshd-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &sshd{dir: dir, login: "sjt" + randomHex(t)[:8], key: filepath.Join(dir, "client"),
		knownHosts: filepath.Join(dir, "known_hosts"), config: filepath.Join(dir, "config"), extra: extra}
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "hostkey"))
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", s.key)
	s.addAccount(t)
	pub, _ := os.ReadFile(s.key + ".pub")
	writeFile(t, filepath.Join(dir, "authorized_keys_"+s.login), string(pub))
	writeFile(t, filepath.Join(dir, "authorized_keys_root"), string(pub))
	s.port = freePort(t)
	hostPub, _ := os.ReadFile(filepath.Join(dir, "hostkey.pub"))
	f := strings.Fields(string(hostPub))
	writeFile(t, s.knownHosts, fmt.Sprintf("[127.0.0.1]:%d %s %s\n", s.port, f[0], f[1]))
	s.start(t)
	return s
}

func (s *sshd) addAccount(t *testing.T) {
	t.Helper()
	home := filepath.Join(s.dir, "home")
	accountCmd(t, "useradd", "--create-home", "--home-dir", home, "--shell", "/bin/sh", "--password", "*", s.login)
	t.Cleanup(func() { accountCmd(t, "userdel", s.login) })
	_ = os.MkdirAll("/run/sshd", 0o755)
	if exec.Command("id", "sshd").Run() != nil {
		_ = exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "sshd").Run()
	}
}

func (s *sshd) start(t *testing.T) {
	t.Helper()
	cfg := filepath.Join(s.dir, "sshd_config")
	writeFile(t, cfg, fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s/hostkey
PidFile %s/sshd.pid
AuthorizedKeysFile %s/authorized_keys_%%u
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
%s
`, s.port, s.dir, s.dir, s.dir, strings.Join(s.extra, "\n")))
	s.cmd = exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", cfg)
	s.cmd.Stderr, _ = os.Create(filepath.Join(s.dir, "sshd.log"))
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	t.Cleanup(s.stop)
	waitFor(t, 10*time.Second, "sshd to listen", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
}

// stop kills sshd and every session process it started (its process group
// and the children that made their own sessions).
func (s *sshd) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	for _, pid := range descendants(s.cmd.Process.Pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// descendants lists the live descendants of pid.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var p, pp int
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(stat), ')')
		if _, err := fmt.Sscanf(e.Name(), "%d", &p); err != nil || i < 0 {
			continue
		}
		if _, err := fmt.Sscanf(string(stat[i+2:]), "%c %d", new(byte), &pp); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// accountCmd runs useradd or userdel, retried while a parallel test holds
// the account database's lock or a killed process of the account lingers.
func accountCmd(t *testing.T, name string, args ...string) {
	t.Helper()
	var out []byte
	var err error
	waitFor(t, 20*time.Second, name+" "+strings.Join(args, " "), func() bool {
		out, err = exec.Command(name, args...).CombinedOutput()
		// another test holds the lock, or a process just killed is not yet gone
		return err == nil || !strings.Contains(string(out), "lock") && !strings.Contains(string(out), "currently used")
	})
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// env is the coordinator's environment for this worker's commands.
func (s *sshd) env(extra ...string) []string {
	return append([]string{"SIMJECTURE_CONFIG=" + s.config}, extra...)
}

// workerRoot makes a worker folder the login account owns.
func (s *sshd) workerRoot(t *testing.T, name string) string {
	t.Helper()
	root := filepath.Join(s.dir, name)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "chown", s.login, root)
	reapMarker(t, root)
	return root
}

// addWorker runs worker add (with addEnv in its environment).
func (s *sshd) addWorker(t *testing.T, id, user, root string, extra ...string) {
	t.Helper()
	args := append([]string{"worker", "add", id, "--host", "127.0.0.1", "--port", fmt.Sprint(s.port), "--user", user,
		"--identity-file", s.key, "--known-hosts", s.knownHosts, "--root", root, "--execution-backend", "bubblewrap"}, extra...)
	if r := sjWith(t, s.env(s.addEnv...), "", args...); r.code != 0 {
		t.Fatalf("worker add: %s", r)
	}
}

func (s *sshd) prepare(t *testing.T, id string, extra ...string) {
	t.Helper()
	if r := sjWith(t, s.env(extra...), "", "worker", "prepare", id); r.code != 0 {
		t.Fatalf("worker prepare %s: %s", id, r)
	}
}
