package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/simjecture/simjecture/engine"
)

// bigStudy is the fixture holding n experiments, as a study of thousands
// shows its newest n: two running, one queued, the rest finished.
func bigStudy(n int) *fakeEngine {
	f := fixture()
	started := t0.Add(-30 * time.Second)
	exps := make([]engine.Receipt, n)
	for i := range exps {
		exps[i] = engine.Receipt{ID: fmt.Sprintf("exp_%024x", i), Status: engine.ExpSucceeded, IsolationBackend: "bubblewrap",
			Purpose: fmt.Sprintf("t.sh %d", i), Commitment: "root", WallSeconds: ptr(0.05), PeakRSSBytes: ptr(int64(3 << 20))}
		switch {
		case i == n-1, i == n-2:
			exps[i].Status, exps[i].StartedAt, exps[i].WallSeconds = engine.ExpRunning, &started, nil
		case i == n-3:
			exps[i].Status, exps[i].WallSeconds = engine.ExpQueued, nil
		case i%17 == 0:
			exps[i].Status = engine.ExpFailed
		}
	}
	f.state.Snapshot.Experiments = exps
	f.state.Snapshot.ExperimentCounts = map[engine.ExpStatus]int{engine.ExpSucceeded: 3000, engine.ExpRunning: 2}
	return f
}

// BenchmarkDashboardView renders View() of a dashboard holding 500
// experiments and 500 events and of one holding 15 of each, alternately in the same run (120×40,
// the Experiments pane focused, one tick between frames as the running
// program has), and reports each frame's time and their ratio. The work of
// a frame should follow the rows on screen, not the rows loaded: the ratio
// should stay near 1.
func BenchmarkDashboardView(b *testing.B) {
	models := make([]Model, 2)
	for i, n := range []int{15, 500} {
		m := openDash(b, bigStudy(n), true, 120, 40)
		evs := make([]engine.Event, n)
		for k := range evs {
			evs[k] = event(int64(100+k), engine.EvExperimentStarted, engine.ExperimentStartedPayload{Experiment: fmt.Sprintf("exp_%024x", k)})
		}
		m, _ = step(b, m, eventsMsg{gen: m.dash.gen, events: evs})
		m = feed(b, m, m.dash.refreshCmd())
		m, _ = step(b, m, keyMsg("tab")) // Claims → Experiments
		if got := m.dash.eventList().n; got < n {
			b.Fatalf("the model holds %d events, want %d", got, n)
		}
		models[i] = m
	}
	var spent [2]time.Duration
	now := t0
	b.ResetTimer()
	for range b.N {
		now = now.Add(500 * time.Millisecond)
		for i := range models {
			start := time.Now()
			models[i], _ = step(b, models[i], tickMsg{gen: models[i].dash.gen, now: now})
			_ = models[i].View()
			spent[i] += time.Since(start)
		}
	}
	small, large := float64(spent[0])/float64(b.N), float64(spent[1])/float64(b.N)
	b.ReportMetric(small/1e3, "µs/frame-15")
	b.ReportMetric(large/1e3, "µs/frame-500")
	b.ReportMetric(large/small, "ratio-500/15")
}
