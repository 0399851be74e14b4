package machine

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// The benchmarks run a real sshd on 127.0.0.1 (started here, with its own
// host key and a throwaway account) and our own binary as the worker. They
// need root (to create the account) and openssh-server; otherwise they skip.

// benchWorker is a loopback worker for the benchmarks.
type benchWorker struct {
	dir, bin, key string
	p             Profile
	m             *sshMachine
}

func newBenchWorker(b *testing.B) *benchWorker {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Skip("needs root: the benchmark creates an account and starts sshd")
	}
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		b.Skip("openssh-server is not installed")
	}
	dir, err := os.MkdirTemp("", "sj-bench-") // sshd reads the keys as the account: a folder it can reach
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	w := &benchWorker{dir: dir}
	w.bin = filepath.Join(w.dir, "simjecture")
	must(b, "go", "build", "-o", w.bin, "github.com/simjecture/simjecture")
	w.key = filepath.Join(w.dir, "client")
	must(b, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", w.key)
	must(b, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(w.dir, "hostkey"))
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	login := fmt.Sprintf("sjb%x", nonce)
	must(b, "useradd", "--no-create-home", "--home-dir", w.dir, "--shell", "/bin/sh", "--password", "*", login)
	b.Cleanup(func() { _ = exec.Command("userdel", login).Run() })
	root := filepath.Join(w.dir, "root")
	must(b, "mkdir", "-p", root)
	must(b, "chown", login, root)
	port := w.startSSHD(b, login)
	w.p = Profile{ID: "bench", Kind: KindSSH, Host: "127.0.0.1", Port: port, User: login, IdentityFile: w.key,
		KnownHosts: filepath.Join(w.dir, "known_hosts"), Root: root, ExecutionBackend: sandbox.Bubblewrap,
		CPUs: 2, MemoryMB: 4096, MaxJobs: 2, OrphanGrace: 30}
	ctx := context.Background()
	if err := prepareSSH(ctx, w.p, Options{SelfExe: w.bin}, func(string) {}); err != nil {
		b.Fatal(err)
	}
	w.m = &sshMachine{p: w.p, t: sshTarget{p: w.p}, o: Options{SelfExe: w.bin}}
	b.Cleanup(func() { _ = w.m.Close() })
	if _, err := w.m.conn(ctx); err != nil {
		b.Fatal(err)
	}
	return w
}

func (w *benchWorker) startSSHD(b *testing.B, login string) int {
	b.Helper()
	pub, _ := os.ReadFile(w.key + ".pub")
	if err := os.WriteFile(filepath.Join(w.dir, "authorized_keys"), pub, 0o644); err != nil {
		b.Fatal(err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cfg := fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s/hostkey\nPidFile %s/sshd.pid\nAuthorizedKeysFile %s/authorized_keys\n"+
		"StrictModes no\nPasswordAuthentication no\nUsePAM no\nAllowUsers %s\nSubsystem sftp internal-sftp\n", port, w.dir, w.dir, w.dir, login)
	if err := os.WriteFile(filepath.Join(w.dir, "sshd_config"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	_ = os.MkdirAll("/run/sshd", 0o755)
	cmd := exec.Command("/usr/sbin/sshd", "-D", "-f", filepath.Join(w.dir, "sshd_config"))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	host, _ := os.ReadFile(filepath.Join(w.dir, "hostkey.pub"))
	f := strings.Fields(string(host))
	kh := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", port, f[0], f[1])
	if err := os.WriteFile(filepath.Join(w.dir, "known_hosts"), []byte(kh), 0o644); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			_ = c.Close()
			break
		}
	}
	return port
}

func must(b *testing.B, name string, args ...string) {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// trivialSpec is `: > out.txt` under bubblewrap.
func (w *benchWorker) trivialSpec(b *testing.B, i int) sandbox.Spec {
	src := filepath.Join(w.dir, "t.sh")
	if i == 0 {
		if err := os.WriteFile(src, []byte(": > out.txt\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	sum, _, _ := sandbox.HashFile(src)
	return sandbox.Spec{Backend: sandbox.Bubblewrap, SelfExe: w.bin, RunDir: filepath.Join(w.dir, "runs", fmt.Sprint(i)),
		ArtifactDir: filepath.Join(w.dir, "art", fmt.Sprint(i)), Sealed: []sandbox.SealedFile{{Rel: "t.sh", HostPath: src, SHA256: sum}},
		Command: []string{"sh", "/work/t.sh"}, Outputs: []string{"out.txt"}, Timeout: 30 * time.Second, CPUs: 1}
}

// BenchmarkWorkerTrivial runs the same trivial experiment locally and on
// the loopback worker (warm connection), alternating, and reports the
// milliseconds the remote path adds (target: at most 25).
func BenchmarkWorkerTrivial(b *testing.B) {
	w := newBenchWorker(b)
	ctx := context.Background()
	var local, remote time.Duration
	b.ResetTimer()
	for i := range b.N {
		spec := w.trivialSpec(b, i)
		start := time.Now()
		if res, err := sandbox.Run(ctx, spec); err != nil || res.ReturnCode == nil || *res.ReturnCode != 0 {
			b.Fatalf("local run: %+v %v", res, err)
		}
		local += time.Since(start)
		spec.ArtifactDir += "-remote"
		start = time.Now()
		if res, _, err := w.m.Run(ctx, fmt.Sprintf("bench_%d_%d", os.Getpid(), i), spec); err != nil || res.ReturnCode == nil || *res.ReturnCode != 0 {
			b.Fatalf("remote run: %+v %v", res, err)
		}
		remote += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(local.Microseconds())/n/1000, "local-ms/op")
	b.ReportMetric(float64(remote.Microseconds())/n/1000, "remote-ms/op")
	b.ReportMetric(float64((remote-local).Microseconds())/n/1000, "added-ms/op")
}

// BenchmarkWorkerInputs moves 1 GiB of inputs to the worker and the same
// file with scp over the same loopback sshd, and reports both rates and
// their ratio (target: at least 0.5).
func BenchmarkWorkerInputs(b *testing.B) {
	w := newBenchWorker(b)
	file := filepath.Join(w.dir, "input.bin")
	writeRandom(b, file, 1<<30)
	sum, size, err := sandbox.HashFile(file)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var ours, scp time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		must(b, "scp", "-q", "-P", fmt.Sprint(w.p.Port), "-i", w.key, "-o", "BatchMode=yes", "-o", "UserKnownHostsFile="+w.p.KnownHosts,
			file, fmt.Sprintf("%s@127.0.0.1:%s/scp.bin", w.p.User, w.p.Root))
		scp += time.Since(start)
		_ = os.Remove(filepath.Join(w.p.Root, "state", "blobs", sum))
		start = time.Now()
		w.upload(ctx, b, i, file, sum, size)
		ours += time.Since(start)
	}
	gib := float64(size) / (1 << 30) * float64(b.N)
	b.ReportMetric(gib/ours.Seconds(), "ours-GiB/s")
	b.ReportMetric(gib/scp.Seconds(), "scp-GiB/s")
	b.ReportMetric(scp.Seconds()/ours.Seconds(), "ratio")
}

// upload creates a job with file as its input and streams it to the worker.
func (w *benchWorker) upload(ctx context.Context, b *testing.B, i int, file, sum string, size int64) {
	b.Helper()
	s, err := w.m.conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	spec := sandbox.Spec{Sealed: []sandbox.SealedFile{{Rel: "in.bin", HostPath: file, SHA256: sum}}, Command: []string{"true"}, Timeout: time.Second}
	req, _ := jobRequest(fmt.Sprintf("upload_%d_%d", os.Getpid(), i), sandbox.Bubblewrap, spec)
	var cr createReply
	if err := s.call(ctx, opCreate, req, &cr); err != nil || len(cr.Missing) != 1 {
		b.Fatalf("create: %v, missing %v", err, cr.Missing)
	}
	a := &attempt{m: w.m, req: req, spec: spec}
	if err := a.upload(ctx, s, cr.Missing[0]); err != nil {
		b.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(w.p.Root, "state", "blobs", sum)); err != nil || info.Size() != size {
		b.Fatalf("the blob did not arrive whole: %v", err)
	}
}

func writeRandom(b *testing.B, file string, size int64) {
	b.Helper()
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 1<<20)
	for written := int64(0); written < size; written += int64(len(block)) {
		_, _ = io.ReadFull(rand.Reader, block)
		if _, err := f.Write(block); err != nil {
			b.Fatal(err)
		}
	}
}
