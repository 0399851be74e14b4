package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
// runner, bwrap, collection) and bare bwrap, interleaved, and reports the
// ratio. It also runs Run's own bwrap command line directly (line-ms: no
// runner, limits, sealing or collection), which splits what Run adds into
// the command line's isolation and the harness.
func BenchmarkLaunchBubblewrap(b *testing.B) {
	spec := benchSpec(b, Bubblewrap, "true")
	launchRatio(b, spec, func() { bareBwrap(b) }, ourBwrapLine(b, spec))
}

// ourBwrapLine returns a function that runs the bwrap command line Run uses
// for spec, with run folders of its own.
func ourBwrapLine(b *testing.B, spec Spec) func() {
	lay := newLayout(filepath.Join(filepath.Dir(spec.RunDir), "line"))
	must(b, os.MkdirAll(lay.work, 0o755))
	must(b, os.MkdirAll(lay.tmp, 0o755))
	spec, err := normalize(spec)
	must(b, err)
	cfg, err := helperFor(spec, lay)
	must(b, err)
	if cfg.release != nil {
		b.Cleanup(cfg.release)
	}
	return func() {
		c := exec.Command(cfg.Argv[0], cfg.Argv[1:]...)
		c.Env, c.Dir = cfg.Env, lay.work
		must(b, c.Run())
	}
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
// interleaved iteration by iteration so that both see the same load. The
// hash-only case is the ceiling: hashing the source without copying it.
func BenchmarkSeal1GiB(b *testing.B) {
	src, size := sealFile(b)
	dir := b.TempDir()
	cases := []struct {
		name string
		f    func(dst string) error
	}{
		// What sealing does: O_DIRECT writes of the hashed buffers where the file system takes them.
		{"seal", func(dst string) error { _, _, err := copyAndHash(src, dst, 0o444); return err }},
		// The buffered path: copy_file_range with the copy hashed behind it.
		{"copy_file_range-then-hash", func(dst string) error { return withFile(src, dst, copyOverlappedFile) }},
		{"tee-hash", func(dst string) error { _, _, err := copyHashing(src, dst); return err }},
		// Where the time goes: the copy alone, with copy_file_range.
		{"copy_file_range-only", func(dst string) error { return copyOnly(src, dst) }},
		// The ceiling: hashing alone, no copy (os.Remove of a missing dst is ignored below).
		{"hash-only", func(string) error { _, _, err := HashFile(src); return err }},
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
				if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
					b.Fatal(err)
				}
				sum += timeN(1, func() { must(b, exec.Command("sha256sum", src).Run()) })
			}
			b.ReportMetric(float64(size)*float64(b.N)/total.Seconds()/1e6, "MB/s")
			b.ReportMetric(float64(size)*float64(b.N)/sum.Seconds()/1e6, "sha256sum-MB/s")
			b.ReportMetric(float64(sum)/float64(total), "x-faster")
		})
	}
}

// BenchmarkSealAfterIdle seals the same 1 GiB input twice per iteration:
// first after the host has been idle for sealIdle with the last copy's
// memory freed ("after-idle"), then again at once, into the memory the
// first copy has just freed ("warm"), with sha256sum of the input as the
// baseline of both. On a VM that hands freed memory back to its host (a
// virtio balloon with free page reporting), the first write of each page
// after such an idle moment costs the host a page fault: this benchmark
// says how much of the sealing time that is on the machine it runs on.
func BenchmarkSealAfterIdle(b *testing.B) {
	src, size := sealFile(b)
	dir := b.TempDir()
	paths := []struct {
		name string
		f    func(dst string) error
	}{
		{"seal", func(dst string) error { _, _, err := copyAndHash(src, dst, 0o444); return err }},
		{"copy_file_range-then-hash", func(dst string) error { return withFile(src, dst, copyOverlappedFile) }},
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			var cold, warm, base time.Duration
			seal := func(i int) time.Duration {
				dst := filepath.Join(dir, "copy"+strconv.Itoa(i))
				start := time.Now()
				err := p.f(dst)
				d := time.Since(start)
				must(b, err)
				must(b, os.Remove(dst))
				return d
			}
			for i := 0; b.Loop(); i++ {
				time.Sleep(sealIdle)
				cold += seal(2 * i)
				warm += seal(2*i + 1)
				base += timeN(1, func() { must(b, exec.Command("sha256sum", src).Run()) })
			}
			mb := func(d time.Duration) float64 { return float64(size) * float64(b.N) / d.Seconds() / 1e6 }
			b.ReportMetric(mb(cold), "after-idle-MB/s")
			b.ReportMetric(mb(warm), "warm-MB/s")
			b.ReportMetric(mb(base), "sha256sum-MB/s")
			b.ReportMetric(float64(base)/float64(cold), "after-idle-x-faster")
			b.ReportMetric(float64(base)/float64(warm), "warm-x-faster")
		})
	}
}

// sealIdle is longer than the 2 s a Linux guest waits before it reports
// free memory to its host (page_reporting's delay).
const sealIdle = 4 * time.Second

// copyOnly copies src to dst with copy_file_range (io.Copy between two
// *os.File), hashing nothing.
func copyOnly(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = io.Copy(out, in)
	return err
}

// BenchmarkWatchdogSample measures one sample over a tree of 100 processes
// and reports the CPU share at one sample every 50 ms.
func BenchmarkWatchdogSample(b *testing.B) {
	// A realistic tree: one target (a shell) with 99 children.
	w := benchTree(b, helperConfig{}, exec.Command("sh", "-c", "for i in $(seq 99); do sleep 1000 & done; wait"))
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

// benchTree starts c, a target with 99 children, and returns a watchdog
// of it under cfg; the tree is killed when the benchmark ends.
func benchTree(b *testing.B, cfg helperConfig, c *exec.Cmd) *watchdog {
	b.Helper()
	startTree(b, c)
	w := newWatchdog(cfg, newServer(os.Getppid()), 1)
	w.target = c.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for len(descendants(w.target)) < 99 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	return w
}

// startTree starts c; c and every descendant of it are killed when the
// test ends.
func startTree(t testing.TB, c *exec.Cmd) {
	t.Helper()
	must(t, c.Start())
	t.Cleanup(func() {
		for _, pid := range descendants(c.Process.Pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = c.Process.Kill()
		_ = c.Wait()
	})
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
// and ratio-less-sealing is (run − sealing) / bare. On a shared host a few
// iterations that lost the CPU dominate a mean, so the medians of the
// iterations and their ratio (median-ratio) are reported as well. line,
// when not nil, is a third command timed in the same loop (line-ms).
// median-background-ms is what was left of the run folder's background work
// (its removal or recycling, the next spare and its blanks) and of the
// runner's (its next start gate) when Run returned: the loop waits for it
// before the bare launch, so it is counted on neither side of the ratio.
func launchRatio(b *testing.B, spec Spec, bare, line func()) {
	if IsCooperative(spec.Backend) && os.Geteuid() == 0 {
		b.Skip("cooperative backends refuse root: run bench/run.sh, which runs this as uid 65534")
	}
	var ours, base, seal, lined, behind []time.Duration
	gated := 0
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		res, err := Run(context.Background(), spec)
		if err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(start))
		if res.Launch == LaunchGate {
			gated++
		}
		// The run's folder is removed or recycled on a background goroutine,
		// meant to overlap the next experiment; here it would overlap (and
		// slow) the bare launch it is compared with. What is left of it when
		// Run returns is reported apart (background-ms).
		start = time.Now()
		folders.busy.Wait()
		waitSpareGate(spec.SelfExe)
		behind = append(behind, time.Since(start))
		start = time.Now()
		bare()
		base = append(base, time.Since(start))
		seal = append(seal, timeSeal(b, spec, i))
		if line != nil {
			start = time.Now()
			line()
			lined = append(lined, time.Since(start))
		}
	}
	if line != nil {
		b.ReportMetric(ms(median(lined)), "median-line-ms")
	}
	o, ba, se := sum(ours), sum(base), sum(seal)
	n := time.Duration(b.N)
	b.ReportMetric(ms(o/n), "run-ms")
	b.ReportMetric(ms(ba/n), "bare-ms")
	b.ReportMetric(ms(se/n), "seal-ms")
	b.ReportMetric(float64(o)/float64(ba), "ratio")
	b.ReportMetric(float64(o-se)/float64(ba), "ratio-less-sealing")
	b.ReportMetric(ms(median(ours)), "median-run-ms")
	b.ReportMetric(ms(median(behind)), "median-background-ms")
	b.ReportMetric(ms(median(base)), "median-bare-ms")
	b.ReportMetric(float64(median(ours))/float64(median(base)), "median-ratio")
	b.ReportMetric(float64(gated)/float64(b.N), "start-gate-share")
}

// waitSpareGate waits until the runner of self has its spare start gate
// (gate.go) waiting for a request, or about 50 ms have passed: the runner
// forks it once a run is over, and that fork is not to overlap (and slow)
// the bare launch the run is compared with. Without start gates it returns
// at once.
func waitSpareGate(self string) {
	clients.mu.Lock()
	c := clients.m[self]
	clients.mu.Unlock()
	if c == nil || len(gateCode) == 0 || forceNoGate {
		return
	}
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); runtime.Gosched() {
		for _, pid := range children(c.pid, nil) {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if err != nil || !strings.HasPrefix(string(b), gateArgv0+"\x00") {
				continue
			}
			if st, err := readStat(pid); err == nil && st.state == 'S' {
				return
			}
		}
	}
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// timeSeal times sealing spec's inputs into a new folder, as Run does.
func timeSeal(b *testing.B, spec Spec, i int) time.Duration {
	spec, err := normalize(spec) // Run seals the normalised spec (its workspace limit bounds the inputs)
	must(b, err)
	dir := filepath.Join(filepath.Dir(spec.RunDir), "seal-"+strconv.Itoa(i))
	must(b, os.Mkdir(dir, 0o755))
	start := time.Now()
	_, err = sealAll(spec, dir, nil)
	d := time.Since(start)
	must(b, err)
	must(b, os.RemoveAll(dir))
	return d
}

// BenchmarkLaunchProot compares Run under proot-cooperative with `proot -r / true`.
func BenchmarkLaunchProot(b *testing.B) {
	launchRatio(b, benchSpec(b, ProotCooperative, "true"), func() {
		if err := exec.Command("proot", "-r", "/", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}, nil)
}

// BenchmarkLaunchProcess compares Run under process-cooperative with a plain exec of true.
func BenchmarkLaunchProcess(b *testing.B) {
	launchRatio(b, benchSpec(b, ProcessCooperative, "true"), bareTrue(b), nil)
}

// BenchmarkLaunchProcessPtrace is BenchmarkLaunchProcess with the limits
// set at the ptrace stop after the exec instead of by the start gate
// (gate.go): the way every run took before, and the one a run with a
// cgroup takes.
func BenchmarkLaunchProcessPtrace(b *testing.B) {
	forceNoGate = true
	defer func() { forceNoGate = false }()
	launchRatio(b, benchSpec(b, ProcessCooperative, "true"), bareTrue(b), nil)
}

func bareTrue(b *testing.B) func() {
	return func() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// withFile opens src and creates dst and runs f on the two.
func withFile(src, dst string, f func(in, out *os.File) error) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	return f(in, out)
}

// copyOverlappedFile is the buffered copy with the hash behind it.
func copyOverlappedFile(in, out *os.File) error {
	_, _, err := copyOverlapped(in, out, 1<<62)
	return err
}
