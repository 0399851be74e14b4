package tui

import (
	"context"
	"encoding/json"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// Bridge carries engine events to the Bubble Tea program. Producers (the
// study followers) Push into a bounded buffer and never wait on the UI; the
// one bridge goroutine (Run) drains the buffer and calls Program.Send with
// a batch, so a burst of events costs one Update. When the buffer is full
// an ordinary event is dropped and counted (the dashboard re-reads the
// snapshot anyway, so nothing but a line of the event log is lost); a
// terminal event (study_state with a status other than running) waits for
// room instead, so it is never dropped.
type Bridge struct {
	buf  chan taggedEvent
	send func(tea.Msg)

	pushed    atomic.Int64
	dropped   atomic.Int64
	delivered atomic.Int64
	messages  atomic.Int64
}

type taggedEvent struct {
	gen int
	ev  engine.Event
}

// eventsMsg is a batch of engine events for the study opened as gen.
type eventsMsg struct {
	gen     int
	events  []engine.Event
	dropped int64 // events dropped so far by the bridge (all studies)
}

// maxBatch bounds one eventsMsg.
const maxBatch = 512

// NewBridge returns a bridge with room for size events that delivers
// through send (Program.Send).
func NewBridge(send func(tea.Msg), size int) *Bridge {
	return &Bridge{buf: make(chan taggedEvent, size), send: send}
}

// BridgeStats counts what the bridge did.
type BridgeStats struct {
	Pushed, Dropped, Delivered, Messages int64
}

// Coalesced is how many events shared a message with an earlier one.
func (s BridgeStats) Coalesced() int64 { return s.Delivered - s.Messages }

// Stats returns the counters.
func (b *Bridge) Stats() BridgeStats {
	return BridgeStats{Pushed: b.pushed.Load(), Dropped: b.dropped.Load(), Delivered: b.delivered.Load(), Messages: b.messages.Load()}
}

// Push offers one event of the study opened as gen. It returns an error
// only when ctx ends while a terminal event waits for room.
func (b *Bridge) Push(ctx context.Context, gen int, ev engine.Event) error {
	b.pushed.Add(1)
	t := taggedEvent{gen: gen, ev: ev}
	if terminalEvent(ev) {
		select {
		case b.buf <- t:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	select {
	case b.buf <- t:
	default:
		b.dropped.Add(1)
	}
	return nil
}

// Run delivers batches until ctx ends. It is the only caller of send. A
// batch holds the events of one study generation, in order.
func (b *Bridge) Run(ctx context.Context) {
	var carry *taggedEvent
	for {
		first := carry
		carry = nil
		if first == nil {
			select {
			case <-ctx.Done():
				return
			case t := <-b.buf:
				first = &t
			}
		}
		batch := []engine.Event{first.ev}
	drain:
		for len(batch) < maxBatch {
			select {
			case t := <-b.buf:
				if t.gen != first.gen {
					carry = &t
					break drain
				}
				batch = append(batch, t.ev)
			default:
				break drain
			}
		}
		b.deliver(first.gen, batch)
	}
}

func (b *Bridge) deliver(gen int, batch []engine.Event) {
	b.delivered.Add(int64(len(batch)))
	b.messages.Add(1)
	b.send(eventsMsg{gen: gen, events: batch, dropped: b.dropped.Load()})
}

// terminalEvent reports whether ev says the supervisor stopped the study.
func terminalEvent(ev engine.Event) bool {
	if ev.Type != engine.EvStudyState {
		return false
	}
	var p engine.StudyStatePayload
	if json.Unmarshal(ev.Payload, &p) != nil {
		return false
	}
	return p.Status != "" && p.Status != engine.StatusRunning
}
