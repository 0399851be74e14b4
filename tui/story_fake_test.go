package tui

import (
	"context"
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

func (f *fakeEngine) Evidence(_ context.Context, review string) ([]engine.Evidence, error) {
	f.calls.Add(1)
	if ev, ok := f.evidence[review]; ok {
		return ev, nil
	}
	return nil, fmt.Errorf("read review %s: no such review", review)
}

// Events pages f.history as engine.View.Events does.
func (f *fakeEngine) Events(_ context.Context, p engine.EventPage) ([]engine.Event, error) {
	f.calls.Add(1)
	var in []engine.Event
	for _, ev := range f.history {
		if ev.Seq > p.After && (p.Before == 0 || ev.Seq < p.Before) && ev.Type != engine.EvRecord {
			in = append(in, ev)
		}
	}
	if len(in) > p.Limit {
		if p.Before > 0 {
			return in[len(in)-p.Limit:], nil
		}
		return in[:p.Limit], nil
	}
	return in, nil
}
