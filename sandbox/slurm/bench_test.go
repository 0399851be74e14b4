package slurm

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkTrivialExperimentVsSrunTrue measures, on the same test cluster
// in the same run, one trivial experiment through a Slurm worker (stage,
// sbatch, the node's backend probe and sandboxed run, the record,
// collection) against `srun true` (the brief's baseline) and against
// `sbatch --wait --wrap true` (a bare batch job, which pays the same
// scheduling and batch launch), and reports both ratios.
func BenchmarkTrivialExperimentVsSrunTrue(b *testing.B) {
	tc := startCluster(b, "")
	c := newTestCluster(b, tc, nil)
	local := Local{Env: tc.env()}
	var srun, batch, exp time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, err := local.Output(context.Background(), "srun", "true"); err != nil {
			b.Fatal(err)
		}
		srun += time.Since(start)
		start = time.Now()
		if _, err := local.Output(context.Background(), "sbatch", "--wait", "--output=/dev/null", "--wrap", "true"); err != nil {
			b.Fatal(err)
		}
		batch += time.Since(start)
		j := shJob(b, fmt.Sprintf("bench/%d/%d", time.Now().UnixNano(), i), "echo ok > result.txt\n", time.Minute)
		start = time.Now()
		o, err := c.Run(context.Background(), j)
		if err != nil || o.Status != "" || o.Result.ReturnCode == nil || *o.Result.ReturnCode != 0 {
			b.Fatalf("trivial experiment: %+v %v", o, err)
		}
		exp += time.Since(start)
	}
	b.ReportMetric(float64(srun.Milliseconds())/float64(b.N), "srun-ms/op")
	b.ReportMetric(float64(batch.Milliseconds())/float64(b.N), "sbatch-ms/op")
	b.ReportMetric(float64(exp.Milliseconds())/float64(b.N), "experiment-ms/op")
	b.ReportMetric(float64(exp)/float64(srun), "x-srun")
	b.ReportMetric(float64(exp)/float64(batch), "x-sbatch")
}
