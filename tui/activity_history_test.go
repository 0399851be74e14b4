package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// turnHistory is a log of n turns, each followed by a record event.
func turnHistory(n int) []engine.Event {
	var evs []engine.Event
	for i := range n {
		evs = append(evs, event(int64(2*i+1), engine.EvTurnStarted, engine.TurnStartedPayload{Role: "worker", Turn: i + 1}),
			event(int64(2*i+2), engine.EvRecord, engine.RecordPayload{Kind: "claims", ID: "root"}))
	}
	return evs
}

// press sends key n times, running the Cmds each press returns.
func press(t *testing.T, m Model, key string, n int) Model {
	t.Helper()
	for range n {
		next, c := step(t, m, keyMsg(key))
		m = feed(t, next, c)
	}
	return m
}

// TestActivityPagesThroughHistory: moving down past the oldest row reads
// older pages until the study's first event, holding at most maxEvents;
// events that come meanwhile wait, and moving back up reads the newer
// pages until the pane follows the newest again.
func TestActivityPagesThroughHistory(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.history = turnHistory(1000)
	m := openStory(t, f, 120, 36)
	for m.dash.focus != paneEvents {
		m, _ = step(t, m, keyMsg("tab"))
	}
	if n := len(m.dash.events); n != followBack/2 {
		t.Fatalf("%d events after opening, want %d", n, followBack/2)
	}
	m = press(t, m, "j", 1100)
	d := m.dash
	if got := eventText(d.events[0]); got != "turn 1 started" || !d.hist.start {
		t.Fatalf("the oldest event held is %q (start %v), want the first turn", got, d.hist.start)
	}
	if len(d.events) > maxEvents || !d.hist.back {
		t.Fatalf("%d events held (at most %d), paged back %v", len(d.events), maxEvents, d.hist.back)
	}
	if v := m.View(); !strings.Contains(v, "turn 1 started") || !strings.Contains(v, "paged back") {
		t.Fatalf("the bottom of the history must be in view:\n%s", v)
	}
	live := event(2001, engine.EvNoteAdded, engine.NoteAddedPayload{Note: engine.Note{Statement: "a late note"}})
	f.history = append(f.history, live)
	m, _ = step(t, m, eventsMsg{gen: m.dash.gen, events: []engine.Event{live}})
	if last := m.dash.events[len(m.dash.events)-1]; last.Seq == live.Seq || len(m.dash.hist.pending) != 1 {
		t.Fatalf("a new event while paged back must wait (last held %d, %d waiting)", last.Seq, len(m.dash.hist.pending))
	}
	m = press(t, m, "k", 1100)
	d = m.dash
	if d.hist.back || d.events[len(d.events)-1].Seq != live.Seq || d.sel[paneEvents] != 0 || d.evAnchor != 0 {
		t.Fatalf("back at the top the pane must follow the newest (back %v, last %d, sel %d, anchor %d)",
			d.hist.back, d.events[len(d.events)-1].Seq, d.sel[paneEvents], d.evAnchor)
	}
	for i := 1; i < len(d.events); i++ {
		if d.events[i].Seq <= d.events[i-1].Seq {
			t.Fatalf("events out of order or repeated at %d: %d after %d", i, d.events[i].Seq, d.events[i-1].Seq)
		}
	}
	if v := m.View(); !strings.Contains(v, "note: a late note") {
		t.Fatalf("the note that waited must show:\n%s", v)
	}
}

var errBoom = errors.New("boom")

// TestActivityHistoryIgnoresStale: a page for another dashboard is dropped,
// and a failed read says why.
func TestActivityHistoryIgnoresStale(t *testing.T) {
	t.Parallel()
	m := openStory(t, fixture(), 80, 24)
	n := len(m.dash.events)
	m, _ = step(t, m, historyMsg{gen: m.dash.gen + 1, older: true, limit: 10, events: turnHistory(3)})
	if len(m.dash.events) != n {
		t.Fatal("a page for another dashboard must be ignored")
	}
	m, _ = step(t, m, historyMsg{gen: m.dash.gen, older: true, err: errBoom})
	if !strings.Contains(m.dash.flash, "could not read older events: boom") {
		t.Fatalf("flash %q", m.dash.flash)
	}
}
