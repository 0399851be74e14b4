package engine

import (
	"context"
	"sync"
	"time"

	"github.com/simjecture/simjecture/store"
)

// Bus wakes subscribers when the study changed. A wake-up carries no data and
// coalesces, so publishing never blocks and never grows memory; subscribers
// read what they have not seen from the store.
type Bus struct {
	mu   sync.Mutex
	next int
	subs map[int]chan struct{}
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{subs: map[int]chan struct{}{}} }

// Subscribe returns a wake-up channel and a function that ends the subscription.
func (b *Bus) Subscribe() (<-chan struct{}, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.next
	b.next++
	ch := make(chan struct{}, 1)
	b.subs[id] = ch
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.subs, id)
	}
}

// Notify wakes every subscriber without blocking.
func (b *Bus) Notify() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Follow calls fn for every event after seq `after`, in order, until ctx ends
// or fn returns an error. It reads when woken and at least every poll (other
// processes, such as an agent's lab calls, change the store too).
func Follow(ctx context.Context, s *store.Store, after int64, wake <-chan struct{}, poll time.Duration, fn func(Event) error) error {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		var batch []store.Event
		err := s.Read(ctx, func(tx *store.Tx) (err error) { batch, err = tx.EventsAfter(after, 500); return err })
		if err != nil {
			return err
		}
		for _, ev := range batch {
			after = ev.Seq
			if err := fn(Event{Seq: ev.Seq, Time: ev.Time, Type: EventType(ev.Type), Payload: ev.Payload}); err != nil {
				return err
			}
		}
		if len(batch) == 500 {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-t.C:
		}
	}
}
