package engine

import (
	"context"
	"fmt"

	"github.com/simjecture/simjecture/store"
)

// MaxEventPage bounds one read of the event history.
const MaxEventPage = 500

// EventPage asks for a page of the event history, oldest first: the
// newest Limit events before seq Before, or (Before 0) the oldest Limit
// events after seq After. Record events, bookkeeping for verify, are left
// out.
type EventPage struct {
	Before, After int64
	Limit         int
}

// Events reads one page of the study's event history for display.
func (v *View) Events(ctx context.Context, p EventPage) ([]Event, error) {
	limit := max(1, min(p.Limit, MaxEventPage))
	var rows []store.Event
	err := v.s.Read(ctx, func(tx *store.Tx) (err error) {
		rows, err = tx.EventsBetween(p.After, p.Before, limit, p.Before > 0, string(EvRecord))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read event history: %w", err)
	}
	out := make([]Event, 0, len(rows))
	for _, ev := range rows {
		out = append(out, Event{Seq: ev.Seq, Time: ev.Time, Type: EventType(ev.Type), Payload: ev.Payload})
	}
	return out, nil
}
