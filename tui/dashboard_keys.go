package tui

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/simjecture/simjecture/engine"
)

// hasDetail reports whether enter opens a detail view on the focused pane.
func (m dashModel) hasDetail() bool {
	switch m.focus {
	case paneStudy:
		return m.loaded
	case paneClaims, paneExperiments, paneReviews:
		return m.listLen(m.focus) > 0
	case paneProcesses:
		return m.selectedExperiment() != ""
	}
	return false
}

// canControl, canPause, canResume and canCancel say whether the control keys can act
// now: never in read-only, and only in a state the engine accepts.
func (m dashModel) canControl() bool { return !m.c.ReadOnly && m.study != nil && m.loaded }

func (m dashModel) canPause() bool {
	return m.canControl() && m.state.Snapshot.Status == engine.StatusRunning
}

func (m dashModel) canResume() bool {
	s := m.state.Snapshot.Status
	return m.canControl() && s != engine.StatusRunning && !engine.Terminal(s) && !m.state.Supervising
}

func (m dashModel) canCancel() bool {
	return m.canControl() && !engine.Terminal(m.state.Snapshot.Status)
}

// interrupted reports whether the study is interrupted: its record says
// running but no live supervisor owns it (engine.StatusInterrupted).
func (m dashModel) interrupted() bool { return m.state.Snapshot.Status == engine.StatusInterrupted }

// hints are the keys that can act in the dashboard's current state.
func (m dashModel) hints() []hint {
	k := m.c.Keys
	if m.steer.open {
		return m.steerHints()
	}
	if m.filters[m.focus].editing && !m.detail {
		return filterHints()
	}
	if m.detail {
		return []hint{{"↑↓", "scroll"}, {"pgup/pgdn", "page"}, {"g/G", "top/end"}, hintOf(k.Help), {"esc", "close"}}
	}
	hs := []hint{{"tab", "pane"}, {"↑↓", "move"}}
	if m.hasDetail() {
		hs = append(hs, hintOf(k.Enter))
	}
	if (m.focus == paneExperiments || m.focus == paneEvents) && m.listLen(m.focus) > 0 {
		hs = append(hs, hintOf(logKeys.Open))
	}
	if filterable(m.focus) && m.rowCount(m.focus) > 0 {
		hs = append(hs, hintOf(k.Filter))
	}
	if h, ok := m.steerHint(); ok {
		hs = append(hs, h)
	}
	for _, c := range []struct {
		ok bool
		b  key.Binding
	}{{m.canPause(), k.Pause}, {m.canResume(), k.Resume}, {m.canCancel(), k.Cancel},
		{m.canContinue(), k.Continue}} {
		if c.ok {
			hs = append(hs, hintOf(c.b))
		}
	}
	switch {
	case m.warningShown():
		hs = append(hs, hint{"x", "dismiss warning"})
	case m.loaded && m.cooperative():
		hs = append(hs, hint{"w", "warning"})
	}
	return append(hs, hintOf(k.Help), hintOf(k.Quit))
}

// helpLines is the `?` overlay: the active keymap, then the markers.
func (m dashModel) helpLines() []string {
	title := "Keys: dashboard"
	if m.detail {
		title = "Keys: detail view"
	}
	hs := m.hints()
	if !m.detail {
		hs = append(hs[:len(hs)-1], hint{"q", "leave; if supervising it asks: y pause · b keep it running"})
	}
	extra := []string{"Claims: ● open  ✓ supported  × falsified  ? unresolved"}
	if m.c.ReadOnly {
		extra = append(extra, "read-only: every control is disabled")
	}
	return helpBox(title, hs, extra...)
}

// moveSel moves the focused pane's selection by d rows. In Activity the
// selection is tied to its event; back at the top, it follows new events.
func (m dashModel) moveSel(d int) dashModel {
	p := m.focus
	m.sel[p] = stepIn(m.shown(p), m.rowCount(p), m.sel[p], d)
	if p == paneEvents {
		m.evAnchor = 0
		if i := m.sel[p]; (i > 0 || m.hist.back) && i < len(m.events) { // paged back, the top row is not the newest
			m.evAnchor = m.events[len(m.events)-1-i].Seq
		}
	}
	return m
}

// keepEventSelection puts the Activity selection back on its event after
// new events arrived (or on the newest when it follows them).
func (m dashModel) keepEventSelection() dashModel {
	m.sel[paneEvents] = 0
	if m.evAnchor == 0 {
		return m
	}
	for i := len(m.events) - 1; i >= 0; i-- {
		if m.events[i].Seq == m.evAnchor {
			m.sel[paneEvents] = len(m.events) - 1 - i
			return m
		}
	}
	m.evAnchor = 0 // its event left the log: follow the newest again
	return m
}
