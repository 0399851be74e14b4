package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// fdTreeScript opens 2,000 files in the folder given as its argument (ten
// of them unlinked), then starts 99 children that inherit none, and waits.
const fdTreeScript = `import os, subprocess, sys
fs = [open(os.path.join(sys.argv[1], "f%d" % i), "w") for i in range(2000)]
for i in range(10):
    os.unlink(os.path.join(sys.argv[1], "f%d" % i))
ps = [subprocess.Popen(["sleep", "1000"]) for _ in range(99)]
for p in ps:
    p.wait()
`

// BenchmarkWatchdogSlowSample measures the slow sample over a tree of 100
// processes whose target holds 2,000 files open in a workspace of 2,000
// entries, with its parts measured in the same run: the fast sample, the
// workspace walk, and the descriptor tables (the part that counts unlinked
// files held open). It reports CPU time per slow sample, its share of one
// core at one slow sample every slowEvery × sampleEvery, and what the
// descriptor tables add to the slow sample as a ratio.
func BenchmarkWatchdogSlowSample(b *testing.B) {
	work := b.TempDir()
	cfg := helperConfig{Workspace: 1 << 40, Watch: []string{work}}
	w := benchTree(b, cfg, exec.Command("python3", "-c", fdTreeScript, work))
	for w.sample(true); len(w.seen) < 100; w.sample(true) {
		if b.Elapsed() > 10*time.Second {
			b.Fatalf("saw %d processes", len(w.seen))
		}
	}
	held, ok := deletedOpenBytes(w.seen, watchedDevices(cfg.Watch), map[fileID]bool{})
	if !ok || held != 0 { // ten empty unlinked files: found, nothing held
		b.Fatalf("held %d ok=%v", held, ok)
	}
	b.ResetTimer()
	var fast, walk, fds, slow time.Duration
	for b.Loop() {
		fast += cpuOf(func() { w.sample(false) })
		walk += cpuOf(func() { measureWorkspace(cfg.Watch, 0, nil) })
		fds += cpuOf(func() { deletedOpenBytes(w.seen, watchedDevices(cfg.Watch), map[fileID]bool{}) })
		slow += cpuOf(func() { w.sample(true) })
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64((slow / n).Microseconds()), "slow-cpu-µs/sample")
	b.ReportMetric(float64((fast / n).Microseconds()), "fast-cpu-µs/sample")
	b.ReportMetric(float64((walk / n).Microseconds()), "walk-cpu-µs")
	b.ReportMetric(float64((fds / n).Microseconds()), "fds-cpu-µs")
	b.ReportMetric(100*(slow/n).Seconds()/(slowEvery*sampleEvery).Seconds(), "slow-cpu-%")
	b.ReportMetric(float64(slow)/float64(max(slow-fds, 1)), "slow/slow-without-fds")
}

func cpuOf(f func()) time.Duration {
	before := cpuTime()
	f()
	return cpuTime() - before
}

// BenchmarkWorkspaceMeasure measures one walk of a workspace of 100,000
// entries (100 folders of 1,000 empty files), against a stat of each entry
// by name measured in the same run, and reports the time per entry and what
// a walk of maxWorkspaceEntries takes at that rate.
func BenchmarkWorkspaceMeasure(b *testing.B) {
	dir := b.TempDir()
	var names []string
	for i := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("d%d", i))
		must(b, os.Mkdir(sub, 0o755))
		for j := range 1000 {
			p := filepath.Join(sub, fmt.Sprintf("f%d", j))
			must(b, os.WriteFile(p, nil, 0o644))
			names = append(names, p)
		}
	}
	var u usage
	per := timeN(3, func() { u = measureWorkspace([]string{dir}, 0, nil) })
	if !u.ok || u.entries != 100_100 {
		b.Fatalf("measure: ok=%v entries=%d", u.ok, u.entries)
	}
	base := timeN(3, func() {
		for _, p := range names {
			_, _ = os.Lstat(p)
		}
	})
	b.ResetTimer()
	for b.Loop() {
		u = measureWorkspace([]string{dir}, 0, nil)
	}
	perEntry := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(u.entries)
	b.ReportMetric(perEntry, "ns/entry")
	b.ReportMetric(perEntry*float64(maxWorkspaceEntries)/1e6, "ms-at-cap")
	b.ReportMetric(per.Seconds()/base.Seconds(), "walk/lstat-by-name")
}
