package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkLabStatus measures lab status with no arguments, and lab brief,
// on studies of 100, 1,000 and 3,000 experiments (each receipt with 2 KB
// log tails, as a chatty experiment leaves) in one run, and reports the
// bytes each answers with. The summary's size and time should not grow
// with the study; nothing here asserts a time.
func BenchmarkLabStatus(b *testing.B) {
	for _, n := range []int{100, 1000, 3000} {
		c, s := newTestStudy(b, nil)
		seedExperiments(b, s, n, 2048, ExpSucceeded, ExpFailed, ExpSucceeded, ExpTimedOut)
		seedReviews(b, s, 5, "resolved")
		lab := &Lab{C: c, S: s}
		ctx := context.Background()
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var size int
			for b.Loop() {
				res, err := lab.Call(ctx, "status", nil)
				if err != nil {
					b.Fatal(err)
				}
				body, err := json.Marshal(res)
				if err != nil {
					b.Fatal(err)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "json-bytes")
		})
		b.Run(fmt.Sprintf("brief/n=%d", n), func(b *testing.B) {
			var size int
			for b.Loop() {
				res, err := lab.Call(ctx, "brief", nil)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := json.Marshal(res)
				size = len(body)
			}
			b.ReportMetric(float64(size), "json-bytes")
		})
	}
}
