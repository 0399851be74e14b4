package store

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Genesis is the previous-hash of the first event.
const Genesis = "GENESIS"

// Event is one row of the append-only event log.
type Event struct {
	Seq      int64           `json:"seq"`
	Time     string          `json:"time"`
	Type     string          `json:"type"`
	Payload  json.RawMessage `json:"payload"`
	PrevHash string          `json:"prev_hash"`
	Hash     string          `json:"hash"`
}

// EventHash is the hash of one event given the hash of the one before it.
func EventHash(prev string, seq int64, at, typ string, payload []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(prev), []byte(strconv.FormatInt(seq, 10)), []byte(at), []byte(typ), payload} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Append adds an event to the log, chained to the one before it.
func (t *Tx) Append(typ string, payload any) (Event, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return Event{}, fmt.Errorf("encode %s event: %w", typ, err)
	}
	prev := Genesis
	var seq int64
	err = t.tx.QueryRowContext(t.ctx, "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").Scan(&seq, &prev)
	if err != nil && !isNoRows(err) {
		return Event{}, fmt.Errorf("read last event: %w", err)
	}
	ev := Event{Seq: seq + 1, Time: time.Now().UTC().Format(time.RFC3339Nano), Type: typ, Payload: body, PrevHash: prev}
	ev.Hash = EventHash(prev, ev.Seq, ev.Time, typ, body)
	_, err = t.tx.ExecContext(t.ctx,
		"INSERT INTO events (seq, time, type, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)",
		ev.Seq, ev.Time, ev.Type, string(body), ev.PrevHash, ev.Hash)
	if err != nil {
		return Event{}, fmt.Errorf("append %s event: %w", typ, err)
	}
	return ev, nil
}

// EventsAfter returns up to limit events with seq > after, oldest first.
func (t *Tx) EventsAfter(after int64, limit int) ([]Event, error) {
	rows, err := t.tx.QueryContext(t.ctx,
		"SELECT seq, time, type, payload, prev_hash, hash FROM events WHERE seq > ? ORDER BY seq LIMIT ?", after, limit)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return scanEvents(rows)
}

// EventsBetween returns up to limit events with after < seq < before
// (before 0: no upper bound) whose type is not skip, oldest first: the
// newest limit of them when newest is set, else the oldest.
func (t *Tx) EventsBetween(after, before int64, limit int, newest bool, skip string) ([]Event, error) {
	order := "ASC"
	if newest {
		order = "DESC"
	}
	rows, err := t.tx.QueryContext(t.ctx, "SELECT seq, time, type, payload, prev_hash, hash FROM events"+
		" WHERE seq > ? AND (? = 0 OR seq < ?) AND type != ? ORDER BY seq "+order+" LIMIT ?", after, before, before, skip, limit)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	out, err := scanEvents(rows)
	if newest {
		slices.Reverse(out)
	}
	return out, err
}

// scanEvents reads the rows of an events query and closes them.
func scanEvents(rows *sql.Rows) ([]Event, error) {
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var ev Event
		var payload string
		if err := rows.Scan(&ev.Seq, &ev.Time, &ev.Type, &payload, &ev.PrevHash, &ev.Hash); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		ev.Payload = json.RawMessage(payload)
		out = append(out, ev)
	}
	return out, rows.Err()
}

// VerifyChain re-computes every event hash and returns one finding per break.
func (t *Tx) VerifyChain() ([]string, error) {
	var findings []string
	prev, want := Genesis, int64(1)
	for {
		batch, err := t.EventsAfter(want-1, 1000)
		if err != nil {
			return nil, err
		}
		for _, ev := range batch {
			findings = append(findings, checkEvent(ev, prev, want)...)
			prev, want = ev.Hash, ev.Seq+1
		}
		if len(batch) < 1000 {
			return findings, nil
		}
	}
}

func checkEvent(ev Event, prev string, want int64) []string {
	var f []string
	if ev.Seq != want {
		f = append(f, fmt.Sprintf("event chain: expected event %d, found %d (events missing)", want, ev.Seq))
	}
	if ev.PrevHash != prev {
		f = append(f, fmt.Sprintf("event chain: event %d does not follow the event before it", ev.Seq))
	}
	if EventHash(ev.PrevHash, ev.Seq, ev.Time, ev.Type, ev.Payload) != ev.Hash {
		f = append(f, fmt.Sprintf("event chain: event %d (%s) was rewritten", ev.Seq, ev.Type))
	}
	return f
}

// Head is the newest event; a zero Event when the log is empty.
func (t *Tx) Head() (Event, error) {
	var ev Event
	var payload string
	err := t.tx.QueryRowContext(t.ctx,
		"SELECT seq, time, type, payload, prev_hash, hash FROM events ORDER BY seq DESC LIMIT 1").
		Scan(&ev.Seq, &ev.Time, &ev.Type, &payload, &ev.PrevHash, &ev.Hash)
	if isNoRows(err) {
		return ev, nil
	}
	if err != nil {
		return ev, fmt.Errorf("read newest event: %w", err)
	}
	ev.Payload = json.RawMessage(payload)
	return ev, nil
}

// NewestOfTypes is the newest event of one of two types with seq <=
// atMost, and whether there is one.
func (t *Tx) NewestOfTypes(a, b string, atMost int64) (Event, bool, error) {
	rows, err := t.tx.QueryContext(t.ctx, "SELECT seq, time, type, payload, prev_hash, hash FROM events"+
		" WHERE type IN (?, ?) AND seq <= ? ORDER BY seq DESC LIMIT 1", a, b, atMost)
	if err != nil {
		return Event{}, false, fmt.Errorf("read events: %w", err)
	}
	evs, err := scanEvents(rows)
	if err != nil || len(evs) == 0 {
		return Event{}, false, err
	}
	return evs[0], true, nil
}
