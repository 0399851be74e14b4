package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// BenchmarkTrivialExperiment measures, in one run, one trivial experiment
// through lab run → executor → Bubblewrap → receipt against a bare
// `bwrap --unshare-all --die-with-parent --ro-bind / / true` launch, and
// reports the ratio and the harness's added milliseconds.
func BenchmarkTrivialExperiment(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("bwrap not installed")
	}
	if err := exec.Command(bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true").Run(); err != nil {
		b.Skipf("bubblewrap unavailable here: %v", err)
	}
	c, s := newTestStudy(b, nil)
	writeResearch(b, c, "t.sh", ": > out.txt\n", 0o644)
	self, _ := os.Executable()
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 1 << 14}
	ex := &executor{c: c, s: s, backend: "bubblewrap", selfExe: self, cores: 2, run: sandbox.Run,
		notify: func() {}, running: map[string]*runningExp{}}
	ctx := context.Background()
	var ours, bare time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := exec.Command(bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true").Run(); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(start)
		start = time.Now()
		oneExperiment(b, ctx, lab, ex, i)
		ours += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(bare.Microseconds())/n/1000, "bare-ms/op")
	b.ReportMetric(float64(ours.Microseconds())/n/1000, "ours-ms/op")
	b.ReportMetric(float64(ours)/float64(bare), "ratio")
	b.ReportMetric(float64((ours-bare).Microseconds())/n/1000, "added-ms/op")
}

func oneExperiment(b *testing.B, ctx context.Context, lab *Lab, ex *executor, i int) {
	timeout := 30.0
	got, err := lab.Run(ctx, RunArgs{Source: "t.sh", Outputs: []string{"out.txt"}, Key: fmt.Sprint(i), Timeout: &timeout})
	if err != nil {
		b.Fatal(err)
	}
	if err := ex.tick(ctx); err != nil {
		b.Fatal(err)
	}
	ex.wg.Wait()
	r, err := lab.receipt(ctx, got.ID)
	if err != nil || r.Status != ExpSucceeded {
		b.Fatalf("unexpected receipt %+v %v", r, err)
	}
}
