package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simjecture/simjecture/store"
)

// BenchmarkVerifyReports measures verify's comparison of the reports
// (checkReports) on a study of 1,000 experiments with 2 KB log tails,
// against writing them (WriteReports, what every supervisor start and
// stop does), both in each iteration, and reports their ratio. Nothing
// here asserts a time.
func BenchmarkVerifyReports(b *testing.B) {
	ctx := context.Background()
	c, s := newTestStudy(b, nil)
	seedExperiments(b, s, 1000, 2048, ExpSucceeded, ExpFailed)
	var write, check time.Duration
	for b.Loop() {
		t := time.Now()
		if err := WriteReports(ctx, c, s); err != nil {
			b.Fatal(err)
		}
		write += time.Since(t)
		report, err := os.ReadFile(filepath.Join(c.Dir, "report.json"))
		if err != nil {
			b.Fatal(err)
		}
		t = time.Now()
		err = s.Read(ctx, func(tx *store.Tx) error {
			f, err := checkReports(tx, c, report)
			if err == nil && len(f) > 0 {
				b.Fatalf("findings on reports just written: %q", f)
			}
			return err
		})
		check += time.Since(t)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(write.Nanoseconds())/float64(b.N), "ns/write")
	b.ReportMetric(float64(check.Nanoseconds())/float64(b.N), "ns/check")
	b.ReportMetric(float64(check)/float64(write), "check/write")
}
