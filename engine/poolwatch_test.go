package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/simjecture/simjecture/sandbox/machine"
	"github.com/simjecture/simjecture/store"
)

// TestPoolUnreachableRecordedOnce: with every worker of the pool down and
// experiments queued, the executor records one pool_unreachable naming the
// workers (and the state the snapshot shows), however many ticks pass, and
// one pool_recovered when a worker answers again; a worker still connecting
// decides nothing.
func TestPoolUnreachableRecordedOnce(t *testing.T) {
	t.Parallel()
	c, s := newTestStudy(t, nil)
	w1, w2 := &fakeMachine{id: "w1"}, &fakeMachine{id: "w2"}
	e := &executor{c: c, s: s, notify: func() {}, running: map[string]*runningExp{},
		pool: []*slot{{id: "w1", m: w1, cpus: 1}, {id: "w2", m: w2, cpus: 1}}}
	ctx := context.Background()
	steps := []struct {
		name       string
		r1, r2     error
		queued     bool
		wantEvents []EventType
		wantDown   []string
	}{
		{"connecting", fmt.Errorf("w1: %w", machine.ErrConnecting), fmt.Errorf("w2: %w", machine.ErrConnecting), true, nil, nil},
		{"all down", fmt.Errorf("w1 refused: %w", machine.ErrUnreachable), fmt.Errorf("w2: %w", machine.ErrUnreachable), true,
			[]EventType{EvPoolUnreachable}, []string{"w1", "w2"}},
		{"still down", fmt.Errorf("w1 refused: %w", machine.ErrUnreachable), fmt.Errorf("w2: %w", machine.ErrUnreachable), true,
			[]EventType{EvPoolUnreachable}, []string{"w1", "w2"}},
		{"w2 back, nothing queued", fmt.Errorf("w1 refused: %w", machine.ErrUnreachable), nil, false,
			[]EventType{EvPoolUnreachable, EvPoolRecovered}, nil},
		{"idle pool not watched", fmt.Errorf("w1 refused: %w", machine.ErrUnreachable), fmt.Errorf("w2: %w", machine.ErrUnreachable), false,
			[]EventType{EvPoolUnreachable, EvPoolRecovered}, nil},
	}
	for _, st := range steps {
		w1.reach, w2.reach = st.r1, st.r2
		if err := e.watchPool(ctx, st.queued); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		var got []EventType
		var down []string
		var unreachable PoolUnreachablePayload
		err := s.Read(ctx, func(tx *store.Tx) error {
			evs, err := tx.EventsAfter(0, 1<<20)
			for _, ev := range evs {
				if typ := EventType(ev.Type); typ == EvPoolUnreachable || typ == EvPoolRecovered {
					got = append(got, typ)
				}
				if EventType(ev.Type) == EvPoolUnreachable {
					if err := json.Unmarshal(ev.Payload, &unreachable); err != nil {
						return err
					}
				}
			}
			snap, serr := getState(tx)
			down = snap.UnreachableWorkers
			return errors.Join(err, serr)
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, st.wantEvents) || !slices.Equal(down, st.wantDown) {
			t.Errorf("%s: events %v, unreachable %v; want %v, %v", st.name, got, down, st.wantEvents, st.wantDown)
		}
		if len(got) > 0 && (!slices.Equal(unreachable.Workers, []string{"w1", "w2"}) || unreachable.Reason != "w1 refused: "+machine.ErrUnreachable.Error()) {
			t.Errorf("%s: pool_unreachable = %+v", st.name, unreachable)
		}
	}
}
