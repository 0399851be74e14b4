package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// labViewSizes are the study sizes of the lab status benchmark and test.
var labViewSizes = []int{100, 1000, 3000}

// seedLabStudy is a study of n experiments (each receipt with 2 KB log
// tails, as a chatty experiment leaves, in four statuses) and 5 reviews.
func seedLabStudy(tb testing.TB, n int) *Lab {
	c, s := newTestStudy(tb, nil)
	seedExperiments(tb, s, n, 2048, ExpSucceeded, ExpFailed, ExpSucceeded, ExpTimedOut)
	seedReviews(tb, s, 5, "resolved")
	return &Lab{C: c, S: s}
}

// callSize runs a lab call with no arguments and returns its JSON size.
func callSize(tb testing.TB, lab *Lab, call string) int {
	res, err := lab.Call(context.Background(), call, nil)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := json.Marshal(res)
	if err != nil {
		tb.Fatal(err)
	}
	return len(body)
}

// BenchmarkLabStatus measures lab status with no arguments, and lab brief,
// on studies of 100, 1,000 and 3,000 experiments in one run: each
// iteration calls each study in turn, so the three are timed under the
// same load. It reports the time of each size, the ratio of the 3,000 case
// to the 100 case (target ≤ 1.5: the summary does not grow with the
// study) and the bytes each answers with. Nothing here asserts a time.
func BenchmarkLabStatus(b *testing.B) {
	labs := make([]*Lab, len(labViewSizes))
	for i, n := range labViewSizes {
		labs[i] = seedLabStudy(b, n)
	}
	for _, call := range []string{"status", "brief"} {
		b.Run(call, func(b *testing.B) {
			spent := make([]time.Duration, len(labs))
			size := make([]int, len(labs))
			for b.Loop() {
				for i, lab := range labs {
					t := time.Now()
					size[i] = callSize(b, lab, call)
					spent[i] += time.Since(t)
				}
			}
			for i, n := range labViewSizes {
				b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N), fmt.Sprintf("ns/call-%d", n))
				b.ReportMetric(float64(size[i]), fmt.Sprintf("bytes-%d", n))
			}
			b.ReportMetric(float64(spent[2])/float64(spent[0]), "ratio-3000/100")
		})
	}
}
