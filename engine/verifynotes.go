package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/simjecture/simjecture/store"
)

// verifyNotesAndUsage checks the notes and the token totals against the
// events that recorded them, as verifyRecords checks receipts, claims and
// reviews: every note row against its note_added event (which carries the
// whole note, with its number), every thread's usage row against the
// thread's last usage event (written with it, in one transaction). A row
// with no event, or an event whose row is gone, is a finding too.
func verifyNotesAndUsage(tx *store.Tx) ([]string, error) {
	notes := map[int64]Note{}
	usage := map[string]UsagePayload{}
	err := eachEvent(tx, func(ev store.Event) {
		switch EventType(ev.Type) {
		case EvNoteAdded:
			var p NoteAddedPayload
			if json.Unmarshal(ev.Payload, &p) == nil {
				notes[p.ID] = p.Note
			}
		case EvUsage:
			var p UsagePayload
			if json.Unmarshal(ev.Payload, &p) == nil {
				usage[p.Thread] = p
			}
		}
	})
	if err != nil {
		return nil, err
	}
	f, err := verifyNotes(tx, notes)
	if err != nil {
		return nil, err
	}
	more, err := verifyUsage(tx, usage)
	return append(f, more...), err
}

func verifyNotes(tx *store.Tx, logged map[int64]Note) ([]string, error) {
	rows, err := tx.ListNotes()
	if err != nil {
		return nil, err
	}
	var f []string
	held := map[int64]bool{}
	for _, r := range rows {
		held[r.Seq] = true
		if msg := checkNoteRow(r, logged); msg != "" {
			f = append(f, fmt.Sprintf("note %d: %s", r.Seq, msg))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(logged)) {
		if !held[id] {
			f = append(f, fmt.Sprintf("note %d: recorded in the event log but missing from the store", id))
		}
	}
	return f, nil
}

// checkNoteRow compares a note row, its kind and supersedes columns
// included (the views filter on them), with the note its event recorded.
func checkNoteRow(r store.NoteRow, logged map[int64]Note) string {
	ev, ok := logged[r.Seq]
	if !ok {
		return "not in the event log (added outside the harness)"
	}
	var n Note
	if err := json.Unmarshal(r.JSON, &n); err != nil {
		return fmt.Sprintf("unreadable (%v)", err)
	}
	n.ID = r.Seq
	got, err1 := json.Marshal(n)
	want, err2 := json.Marshal(ev)
	if err1 != nil || err2 != nil || !bytes.Equal(got, want) || r.Kind != string(n.Kind) || r.Supersedes != n.Supersedes {
		return "changed outside the harness (its row does not match its note_added event)"
	}
	return ""
}

func verifyUsage(tx *store.Tx, logged map[string]UsagePayload) ([]string, error) {
	rows, err := tx.ListUsage()
	if err != nil {
		return nil, err
	}
	var f []string
	held := map[string]bool{}
	for _, r := range rows {
		held[r.Thread] = true
		ev, ok := logged[r.Thread]
		switch {
		case !ok:
			f = append(f, fmt.Sprintf("usage of thread %q: not in the event log (added outside the harness)", r.Thread))
		case !sameCount(r.Input, ev.InputTokens) || !sameCount(r.Output, ev.OutputTokens):
			f = append(f, fmt.Sprintf("usage of thread %q: token totals %s in, %s out; its last usage event says %s in, %s out",
				r.Thread, count(r.Input), count(r.Output), count(ev.InputTokens), count(ev.OutputTokens)))
		}
	}
	for _, th := range sortedKeys(logged) {
		if !held[th] {
			f = append(f, fmt.Sprintf("usage of thread %q: recorded in the event log but missing from the store", th))
		}
	}
	return f, nil
}

func sameCount(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func count(p *int64) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprint(*p)
}
