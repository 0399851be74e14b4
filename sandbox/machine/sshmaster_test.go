package machine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestSweepControlDir: the sockets of dead processes go; those of live
// processes (ours included) and names that are not ours stay.
func TestSweepControlDir(t *testing.T) {
	t.Parallel()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(gone.Process.Pid)
	cases := []struct {
		name string
		kept bool
	}{
		{dead + "-0123456789abcdef", false},
		{strconv.Itoa(os.Getpid()) + "-0123456789abcdef", true},
		{strconv.Itoa(os.Getppid()) + "-0123456789abcdef", true},
		{"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c", true}, // an older %C socket
		{dead, true},
	}
	dir := t.TempDir()
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(dir, c.name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sweepControlDir(dir)
	for _, c := range cases {
		_, err := os.Stat(filepath.Join(dir, c.name))
		if kept := err == nil; kept != c.kept {
			t.Errorf("%s: kept %v, want %v", c.name, kept, c.kept)
		}
	}
}

// TestMasterUnreachable: a master that cannot connect (nothing listens on
// the port) is transport uncertainty, not kept; the next command tries a
// new one.
func TestMasterUnreachable(t *testing.T) {
	t.Parallel()
	ssh, err := exec.LookPath("ssh")
	if err != nil {
		t.Skipf("the OpenSSH client is not installed (go tool task test installs openssh-client): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close() // a free port: the connection is refused
	p := validSSH()
	p.Host, p.Port, p.KnownHosts = "127.0.0.1", port, filepath.Join(t.TempDir(), "known_hosts")
	tg := sshTarget{p: p}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 2 {
		if _, err := tg.master(ctx, ssh); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("master to a closed port = %v, want ErrUnreachable", err)
		}
	}
	ctl, _ := tg.controlPath()
	masters.Lock()
	m := masters.m[ctl]
	masters.Unlock()
	if m == nil || !m.ended() {
		t.Errorf("the failed master is still counted as running")
	}
}

// BenchmarkSSHCommand runs a trivial remote command (as a login node's
// Slurm client or file operation is) over this process's warm master and
// over a connection of its own, alternating, and reports both and their
// ratio: what reusing the connection saves per command.
func BenchmarkSSHCommand(b *testing.B) {
	w := newBenchWorker(b)
	ctx := context.Background()
	tg := w.m.t
	ssh, err := exec.LookPath("ssh")
	if err != nil {
		b.Skip("the OpenSSH client is not installed")
	}
	var warm, cold time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := tg.run(ctx, "true", nil); err != nil {
			b.Fatalf("over the master: %v", err)
		}
		warm += time.Since(start)
		start = time.Now()
		own := append(append([]string{"-T"}, tg.options()...), "-o", "ControlPath=none", "--", tg.p.Host, "true")
		if out, err := exec.CommandContext(ctx, ssh, own...).CombinedOutput(); err != nil {
			b.Fatalf("own connection: %v: %s", err, out)
		}
		cold += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(warm.Microseconds())/n/1000, "warm-ms/op")
	b.ReportMetric(float64(cold.Microseconds())/n/1000, "own-connection-ms/op")
	b.ReportMetric(cold.Seconds()/warm.Seconds(), "own/warm")
}

// TestControlDirNotBlockedByASquatter: a shared control folder name that
// is not ours (made by another account, or not private) does not stop our
// ssh: the process uses a private folder of its own instead.
func TestControlDirNotBlockedByASquatter(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	squat := filepath.Join(tmp, fmt.Sprintf("simjecture-ssh-%d", os.Geteuid()))
	if err := os.Mkdir(squat, 0o777); err != nil { // not private: as a squatter's would be to us
		t.Fatal(err)
	}
	if err := os.Chmod(squat, 0o777); err != nil {
		t.Fatal(err)
	}
	resetCtlDir := func() { ctlDir.once, ctlDir.dir, ctlDir.err = sync.Once{}, "", nil }
	resetCtlDir()
	t.Cleanup(resetCtlDir) // later callers choose again, with the TMPDIR restored
	dir, err := controlDir()
	if err != nil {
		t.Fatalf("controlDir with the shared name taken: %v", err)
	}
	if dir == squat || filepath.Dir(dir) != tmp {
		t.Fatalf("controlDir = %s; want a private folder of its own in %s", dir, tmp)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("control folder %s: %v %v", dir, info.Mode(), err)
	}
}
