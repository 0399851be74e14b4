package engine

import (
	"encoding/json"
	"fmt"

	"github.com/simjecture/simjecture/store"
)

// verifySteering re-checks the operator guidance: each message's text
// against the sha256 kept with it and the one its steering_queued event
// recorded (messages queued before either was kept are checked against
// what there is), every message against its event, and every receipt's
// guidance ids against the messages.
func verifySteering(tx *store.Tx, exps []Receipt) ([]string, error) {
	rows, err := tx.ListSteering()
	if err != nil {
		return nil, err
	}
	queued, err := queuedSteering(tx)
	if err != nil {
		return nil, err
	}
	var f []string
	held := map[string]bool{}
	for _, r := range rows {
		held[r.ID] = true
		f = append(f, checkSteeringRow(r, queued)...)
	}
	for id := range queued {
		if !held[id] {
			f = append(f, fmt.Sprintf("steering %s: queued in the event log but missing from the store", id))
		}
	}
	for _, r := range exps {
		for _, id := range r.Guidance {
			if !held[id] {
				f = append(f, fmt.Sprintf("%s: lists guidance %s, which the store does not hold", r.ID, id))
			}
		}
	}
	return f, nil
}

func checkSteeringRow(r store.SteeringRow, queued map[string]string) []string {
	got := docHash([]byte(r.Text))
	ev, logged := queued[r.ID]
	switch {
	case !logged:
		return []string{fmt.Sprintf("steering %s: not in the event log (added outside the harness)", r.ID)}
	case r.TextSHA256 != "" && r.TextSHA256 != got:
		return []string{fmt.Sprintf("steering %s: text changed (sha256 %s, recorded %s)", r.ID, short(got), short(r.TextSHA256))}
	case ev != "" && ev != got:
		return []string{fmt.Sprintf("steering %s: text changed (sha256 %s, its steering_queued event recorded %s)", r.ID, short(got), short(ev))}
	}
	return nil
}

// queuedSteering maps each queued message's id to the sha256 its event
// recorded ("" for events older than the field).
func queuedSteering(tx *store.Tx) (map[string]string, error) {
	out := map[string]string{}
	err := eachEvent(tx, func(ev store.Event) {
		if EventType(ev.Type) != EvSteeringQueued {
			return
		}
		var p SteeringQueuedPayload
		if json.Unmarshal(ev.Payload, &p) == nil {
			out[p.ID] = p.SHA256
		}
	})
	return out, err
}
