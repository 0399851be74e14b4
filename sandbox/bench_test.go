package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func benchSpec(b *testing.B, backend Backend, cmd ...string) Spec {
	return experiment{backend: backend, command: cmd, files: map[string]string{"sim.py": "pass\n"}}.spec(b)
}

func bareBwrap(b *testing.B) {
	if err := exec.Command("bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true").Run(); err != nil {
		b.Fatal(err)
	}
}

func timeN(n int, f func()) time.Duration {
	start := time.Now()
	for range n {
		f()
	}
	return time.Since(start) / time.Duration(n)
}

func BenchmarkBareBwrap(b *testing.B) {
	for b.Loop() {
		bareBwrap(b)
	}
}

// BenchmarkLaunchBubblewrap runs a trivial experiment through Run (sealing,
// runner, bwrap, collection) and bare bwrap, interleaved, and reports the ratio.
func BenchmarkLaunchBubblewrap(b *testing.B) {
	launchRatio(b, Bubblewrap, func() { bareBwrap(b) })
}

func sealFile(b *testing.B) (string, int64) {
	mb, _ := strconv.Atoi(os.Getenv("SIMJECTURE_BENCH_SEAL_MB"))
	if mb <= 0 {
		mb = 1024
	}
	p := filepath.Join(b.TempDir(), "input")
	f, err := os.Create(p)
	must(b, err)
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for range mb {
		_, err = f.Write(buf)
		must(b, err)
	}
	must(b, f.Close())
	return p, int64(mb) << 20
}

// BenchmarkSeal1GiB compares sealing (copy + hash) with sha256sum of the
// same file (1 GiB unless SIMJECTURE_BENCH_SEAL_MB says otherwise), the two
// interleaved iteration by iteration so that both see the same load.
func BenchmarkSeal1GiB(b *testing.B) {
	src, size := sealFile(b)
	dir := b.TempDir()
	cases := []struct {
		name string
		f    func(dst string) error
	}{
		{"copy_file_range-then-hash", func(dst string) error { _, _, err := copyAndHash(src, dst, 0o444); return err }},
		{"tee-hash", func(dst string) error { _, _, err := copyHashing(src, dst); return err }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			var total, sum time.Duration
			for i := 0; b.Loop(); i++ {
				dst := filepath.Join(dir, c.name+strconv.Itoa(i))
				start := time.Now()
				must(b, c.f(dst))
				total += time.Since(start)
				must(b, os.Remove(dst))
				sum += timeN(1, func() { must(b, exec.Command("sha256sum", src).Run()) })
			}
			b.ReportMetric(float64(size)*float64(b.N)/total.Seconds()/1e6, "MB/s")
			b.ReportMetric(float64(size)*float64(b.N)/sum.Seconds()/1e6, "sha256sum-MB/s")
			b.ReportMetric(float64(sum)/float64(total), "x-faster")
		})
	}
}

// BenchmarkWatchdogSample measures one sample over a tree of 100 processes
// and reports the CPU share at one sample every 50 ms.
func BenchmarkWatchdogSample(b *testing.B) {
	// A realistic tree: one target (a shell) with 99 children.
	c := exec.Command("sh", "-c", "for i in $(seq 99); do sleep 1000 & done; wait")
	must(b, c.Start())
	defer func() {
		for _, pid := range descendants(c.Process.Pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = c.Process.Kill()
		_ = c.Wait()
	}()
	w := newWatchdog(helperConfig{}, newServer(os.Getppid()), 1)
	w.target = c.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for len(descendants(w.target)) < 99 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	b.ResetTimer()
	before := cpuTime()
	for b.Loop() {
		w.sample(false)
	}
	used := cpuTime() - before
	if len(w.seen) < 100 {
		b.Fatalf("saw %d processes", len(w.seen))
	}
	// CPU time (user + system) per sample against the 50 ms between samples:
	// the share of one core the watchdog uses. Wall time is also reported; on
	// a busy host it includes waiting for the CPU.
	per := used / time.Duration(b.N)
	b.ReportMetric(100*per.Seconds()/sampleEvery.Seconds(), "cpu-%")
	b.ReportMetric(float64(per.Microseconds()), "cpu-µs/sample")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMemoryDetection reports how long after the tree crossed its
// memory limit it was killed (an upper bound). The experiment prints a
// wall-clock stamp after each 10 MiB; the crossing happened after the last
// stamp printed, and the kill at StartedAt + WallSeconds.
func BenchmarkMemoryDetection(b *testing.B) {
	py := "import time\nx = []\nfor i in range(60):\n    x.append('y' * (10 << 20))\n" +
		"    print(len(x) * 10, time.time(), flush=True)\n    time.sleep(0.01)\ntime.sleep(30)\n"
	spec := benchSpec(b, Bubblewrap, "python3", "-c", py)
	spec.MemoryBytes = 100 << 20
	var delay float64
	for b.Loop() {
		r, err := Run(context.Background(), spec)
		if err != nil || r.LimitExceeded != LimitMemory {
			b.Fatal(err, r.LimitExceeded)
		}
		killed := float64(r.StartedAt.UnixNano())/1e9 + r.WallSeconds
		delay += killed - lastStamp(b, r.StdoutTail)
	}
	b.ReportMetric(1000*delay/float64(b.N), "delay-ms")
}

func lastStamp(b *testing.B, out string) float64 {
	last := 0.0
	for _, line := range strings.Split(out, "\n") {
		var mb int
		var ts float64
		if _, err := fmt.Sscan(line, &mb, &ts); err == nil {
			last = ts
		}
	}
	if last == 0 {
		b.Fatalf("no stamp in %q", out)
	}
	return last
}

// launchRatio runs a trivial experiment under backend through Run and the
// bare launcher, interleaved, and reports both and their ratio. The target
// is "≤ 1.5× plus sealing": seal-ms is the sealing of the experiment's
// inputs (copy and hash into a fresh folder) timed alone in the same run,
// and ratio-less-sealing is (run − sealing) / bare.
func launchRatio(b *testing.B, backend Backend, bare func()) {
	if IsCooperative(backend) && os.Geteuid() == 0 {
		b.Skip("cooperative backends refuse root: run bench/run.sh, which runs this as uid 65534")
	}
	spec := benchSpec(b, backend, "true")
	var ours, base, seal time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := Run(context.Background(), spec); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(start)
		start = time.Now()
		bare()
		base += time.Since(start)
		seal += timeSeal(b, spec, i)
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64((ours/n).Microseconds())/1000, "run-ms")
	b.ReportMetric(float64((base/n).Microseconds())/1000, "bare-ms")
	b.ReportMetric(float64((seal/n).Microseconds())/1000, "seal-ms")
	b.ReportMetric(float64(ours)/float64(base), "ratio")
	b.ReportMetric(float64(ours-seal)/float64(base), "ratio-less-sealing")
}

// timeSeal times sealing spec's inputs into a new folder, as Run does.
func timeSeal(b *testing.B, spec Spec, i int) time.Duration {
	dir := filepath.Join(filepath.Dir(spec.RunDir), "seal-"+strconv.Itoa(i))
	must(b, os.Mkdir(dir, 0o755))
	start := time.Now()
	_, err := sealAll(spec, dir)
	d := time.Since(start)
	must(b, err)
	must(b, os.RemoveAll(dir))
	return d
}

// BenchmarkLaunchProot compares Run under proot-cooperative with `proot -r / true`.
func BenchmarkLaunchProot(b *testing.B) {
	launchRatio(b, ProotCooperative, func() {
		if err := exec.Command("proot", "-r", "/", "true").Run(); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkLaunchProcess compares Run under process-cooperative with a plain exec of true.
func BenchmarkLaunchProcess(b *testing.B) {
	launchRatio(b, ProcessCooperative, func() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	})
}
