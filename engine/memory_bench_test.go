package engine

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/simjecture/simjecture/provider"
)

// BenchmarkSupervisorMemory runs a study of thousands of experiments (50 per
// turn, with the in-process fake runner) and reports the live heap after
// 500 and after 3000 experiments: a bounded supervisor holds no per-experiment
// state, so the two should be about equal.
func BenchmarkSupervisorMemory(b *testing.B) {
	for range b.N {
		c, s := newTestStudy(b, nil)
		writeResearch(b, c, "sim.py", "print(1)\n", 0o644)
		lab := &Lab{C: c, S: s, Cores: 2, MemMB: 1 << 20}
		const perTurn, total = 50, 3000
		heap := map[int]float64{}
		queued := 0
		var sv *Supervisor
		agent := &fakeAgent{review: approve, worker: func(n int) provider.Outcome {
			if queued == 500 || queued == total {
				heap[queued] = liveHeapMB()
			}
			if queued >= total {
				sv.Stop(StatusPaused)
				return provider.Outcome{}
			}
			for i := 0; i < perTurn; i++ {
				args := fmt.Sprintf(`{"source":"sim.py","outputs":["r.json"],"key":"%d"}`, queued)
				if _, err := lab.Call(context.Background(), "run", []byte(args)); err != nil {
					b.Error(err)
				}
				queued++
			}
			return provider.Outcome{}
		}}
		var err error
		sv, err = Open(context.Background(), c, agent, Options{Run: fakeRun, Cores: 2})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sv.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		_ = sv.Close()
		b.ReportMetric(heap[500], "heapMB@500")
		b.ReportMetric(heap[total], "heapMB@3000")
	}
}

func liveHeapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}
