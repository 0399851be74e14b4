package tui

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

func terminal(seq int64) engine.Event {
	return event(seq, engine.EvStudyState, engine.StudyStatePayload{Status: engine.StatusCancelled})
}

// TestBridgeDropsButNeverTerminal fills the buffer while nobody reads, then
// pushes a terminal event: ordinary overflow is dropped and counted, the
// terminal event waits for room and is delivered.
func TestBridgeDropsButNeverTerminal(t *testing.T) {
	t.Parallel()
	got := make(chan tea.Msg)
	b := NewBridge(func(m tea.Msg) { got <- m }, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 2000 {
		if err := b.Push(ctx, 1, event(int64(i+1), "activity", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if st := b.Stats(); st.Dropped != 2000-64 {
		t.Fatalf("dropped %d, want %d", st.Dropped, 2000-64)
	}
	pushed := make(chan error, 1)
	go func() { pushed <- b.Push(ctx, 1, terminal(5000)) }()
	var wg sync.WaitGroup
	wg.Go(func() { b.Run(ctx) })
	var seqs []int64
	for !slices.Contains(seqs, 5000) {
		msg := (<-got).(eventsMsg)
		for _, ev := range msg.events {
			seqs = append(seqs, ev.Seq)
		}
	}
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	if !slices.IsSorted(seqs) || len(seqs) != 65 {
		t.Fatalf("delivered %d events (want the 64 buffered and the terminal one, in order)", len(seqs))
	}
}

func TestBridgeSplitsGenerations(t *testing.T) {
	t.Parallel()
	var msgs []eventsMsg
	b := NewBridge(func(m tea.Msg) { msgs = append(msgs, m.(eventsMsg)) }, 16)
	ctx, cancel := context.WithCancel(context.Background())
	for i, gen := range []int{1, 1, 2, 2, 2} {
		_ = b.Push(ctx, gen, event(int64(i), "x", nil))
	}
	_ = b.Push(ctx, 2, terminal(9))
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	for b.Stats().Delivered < 6 {
		// Run delivers synchronously through send; wait for it to drain.
		select {
		case <-done:
			t.Fatal("Run ended early")
		default:
		}
	}
	cancel()
	<-done
	if len(msgs) != 2 || msgs[0].gen != 1 || len(msgs[0].events) != 2 || msgs[1].gen != 2 || len(msgs[1].events) != 4 {
		t.Fatalf("batches = %+v", msgs)
	}
}

// BenchmarkBridgeFlood offers b.N engine events at 10,000 a second to the
// bridge, whose Program.Send stand-in is an unbuffered channel read by a
// loop that runs the dashboard's Update (and answers each refresh it asks
// for at once). It reports the events delivered per second, how many were
// dropped or coalesced, and the 99th percentile of Update's duration; the
// last event is terminal and must arrive.
func BenchmarkBridgeFlood(b *testing.B) {
	const rate = 10000
	f := fixture()
	c := newCommon(f, false)
	dash := newDash(c, context.Background(), 1, f.Dir(), t0)
	dash.width, dash.height = 100, 30
	dash, _ = dash.Update(studyOpenedMsg{gen: 1, study: f})
	dash, _ = dash.Update(stateMsg{gen: 1, state: f.state})

	sendc := make(chan tea.Msg)
	br := NewBridge(func(m tea.Msg) { sendc <- m }, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { br.Run(ctx) })
	var durations []time.Duration
	sawTerminal := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case msg := <-sendc:
				start := time.Now()
				var cmd tea.Cmd
				dash, cmd = dash.Update(msg)
				if cmd != nil {
					dash, _ = dash.Update(stateMsg{gen: 1, state: f.state})
				}
				durations = append(durations, time.Since(start))
				if em := msg.(eventsMsg); slices.ContainsFunc(em.events, terminalEvent) {
					close(sawTerminal)
				}
			}
		}
	})

	b.ResetTimer()
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	seq := int64(0)
	for seq < int64(b.N) {
		<-tick.C
		due := min(int64(b.N), int64(time.Since(start).Seconds()*rate)+1)
		for ; seq < due; seq++ {
			_ = br.Push(ctx, 1, event(seq+1, "activity", map[string]string{"activity": "flood"}))
		}
	}
	tick.Stop()
	_ = br.Push(ctx, 1, terminal(seq+1))
	<-sawTerminal
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	wg.Wait()

	st := br.Stats()
	slices.Sort(durations)
	p99 := durations[len(durations)*99/100]
	b.ReportMetric(float64(st.Delivered)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(st.Dropped), "dropped")
	b.ReportMetric(float64(st.Coalesced()), "coalesced")
	b.ReportMetric(float64(st.Messages), "msgs")
	b.ReportMetric(float64(p99.Nanoseconds()), "p99-update-ns")
	if st.Delivered+st.Dropped != st.Pushed {
		b.Fatalf("lost events: pushed %d, delivered %d, dropped %d", st.Pushed, st.Delivered, st.Dropped)
	}
}
