package tui

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// Activity pages through the whole event history, holding at most
// maxEvents of it. New events append while the pane shows the newest
// (it follows them at the top, or keeps the selected event when scrolled).
// Moving near its oldest row reads the page before it from the store
// (engine.View.Events, in a Cmd); holding more than maxEvents then drops
// the newest, and the pane is "paged back": new events wait in a bounded
// buffer, and moving near its top reads the pages after it until the
// newest is in view again.

// historyPage is how many events one read of the history asks for.
const historyPage = 128

// eventHistory is where the Activity window stands in the history.
type eventHistory struct {
	back     bool           // the window does not end at the newest event
	start    bool           // the window begins at the study's first event
	fetching bool           // a page read is in flight
	pending  []engine.Event // new events that came while paged back
	lost     bool           // pending overflowed: read pages until the newest
}

// historyMsg is one page of the history, older or newer than the window.
type historyMsg struct {
	gen    int
	older  bool
	limit  int
	events []engine.Event
	err    error
}

// Events reads a page of the event history.
func (s *liveStudy) Events(ctx context.Context, p engine.EventPage) ([]engine.Event, error) {
	return s.view.Events(ctx, p)
}

func (m dashModel) historyCmd(older bool, p engine.EventPage) tea.Cmd {
	s, ctx, gen := m.study, m.ctx, m.gen
	return func() tea.Msg {
		evs, err := s.Events(ctx, p)
		return historyMsg{gen: gen, older: older, limit: p.Limit, events: evs, err: err}
	}
}

// addLive takes new events from the bridge (record events are bookkeeping
// for verify, not news for the operator).
func (m dashModel) addLive(evs []engine.Event) dashModel {
	for _, ev := range evs {
		if ev.Type == engine.EvRecord {
			continue
		}
		if m.hist.back {
			m.hist.pending = append(m.hist.pending, ev)
		} else {
			m.events = append(m.events, ev)
		}
	}
	if n := len(m.hist.pending); n > maxEvents {
		m.hist.pending, m.hist.lost = append([]engine.Event(nil), m.hist.pending[n-maxEvents:]...), true
	}
	return m.trimOldest()
}

// trimOldest keeps the newest maxEvents of the window.
func (m dashModel) trimOldest() dashModel {
	if n := len(m.events); n > maxEvents {
		m.events, m.hist.start = append([]engine.Event(nil), m.events[n-maxEvents:]...), false
	}
	return m
}

// moveAndPage moves the selection and, in Activity near either end of the
// window, reads the next page of the history.
func (m dashModel) moveAndPage(d int) (dashModel, tea.Cmd) {
	m = m.moveSel(d)
	n, sel := len(m.events), m.sel[paneEvents]
	if m.focus != paneEvents || m.hist.fetching || m.study == nil || n == 0 {
		return m, nil
	}
	switch {
	case d > 0 && sel >= n-3 && !m.hist.start:
		m.hist.fetching = true
		return m, m.historyCmd(true, engine.EventPage{Before: m.events[0].Seq, Limit: historyPage})
	case d < 0 && sel <= 2 && m.hist.back:
		m.hist.fetching = true
		return m, m.historyCmd(false, engine.EventPage{After: m.events[n-1].Seq, Limit: historyPage})
	}
	return m, nil
}

func (m dashModel) handleHistory(msg historyMsg) (dashModel, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	m.hist.fetching = false
	switch {
	case msg.err != nil:
		return m.say("could not read older events: " + msg.err.Error()), nil
	case msg.older:
		m = m.prependOlder(msg.events, len(msg.events) < msg.limit)
	default:
		m = m.appendNewer(msg.events, len(msg.events) < msg.limit)
	}
	return m.keepEventSelection(), nil
}

// prependOlder puts a page before the window, dropping its newest events
// beyond maxEvents (the window is then paged back).
func (m dashModel) prependOlder(page []engine.Event, first bool) dashModel {
	var older []engine.Event
	for _, ev := range page {
		if len(m.events) == 0 || ev.Seq < m.events[0].Seq {
			older = append(older, ev)
		}
	}
	m.events, m.hist.start = append(older, m.events...), first
	if n := len(m.events); n > maxEvents {
		m.events, m.hist.back = m.events[:maxEvents:maxEvents], true
	}
	return m
}

// appendNewer puts a page after the window; at the newest it takes the
// events that waited and follows new ones again.
func (m dashModel) appendNewer(page []engine.Event, newest bool) dashModel {
	m.events = appendAfter(m.events, page)
	if newest {
		m.events = appendAfter(m.events, m.hist.pending)
		m.hist.back, m.hist.lost = m.hist.lost, false // after an overflow, read on until the newest
		m.hist.pending = nil
	}
	return m.trimOldest()
}

// appendAfter appends the events of page newer than the last of evs.
func appendAfter(evs, page []engine.Event) []engine.Event {
	for _, ev := range page {
		if len(evs) == 0 || ev.Seq > evs[len(evs)-1].Seq {
			evs = append(evs, ev)
		}
	}
	return evs
}

// activityTitle is the Activity pane's title: how many events it holds,
// and whether newer ones are above the window.
func (m dashModel) activityTitle(n int) string {
	if m.hist.back {
		return fmt.Sprintf("%s (%d, paged back · ↑ newer)", paneNames[paneEvents], n)
	}
	return fmt.Sprintf("%s (%d)", paneNames[paneEvents], n)
}
