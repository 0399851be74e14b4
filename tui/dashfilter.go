package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// The dashboard's side of the `/` filter: each list pane has its own
// filter; the last one kept or cleared is recalled by `/` on any pane.

// filterable reports whether pane p is a list the filter narrows.
func filterable(p pane) bool { return p != paneStudy }

// paneRows is pane p's rows, as the pane renders them.
func (m dashModel) paneRows(p pane) rowList {
	w := m.mainWidth()
	switch p {
	case paneClaims:
		return m.claimList(w)
	case paneExperiments:
		return m.experimentList(w < 70)
	case paneProcesses:
		return m.procList(w)
	case paneReviews:
		return m.reviewList(w / 2)
	case paneEvents:
		return m.eventList()
	}
	return rowList{}
}

// claimList and reviewList are those panes' rows w cells wide, rendered
// once per snapshot and width (their columns line up over every row).
func (m dashModel) claimList(w int) rowList {
	return listAt(m.memo.aligned(paneClaims, m.exps.gen, w, func() []string { return m.claimRows(w) }), m.exps.gen, w)
}

func (m dashModel) reviewList(w int) rowList {
	return listAt(m.memo.aligned(paneReviews, m.exps.gen, w, func() []string { return m.reviewRows(w) }), m.exps.gen, w)
}

// rowID is what the filter finds in row i of pane p besides its text: the
// full ids (the rows show them shortened) and an experiment's purpose.
func (m dashModel) rowID(p pane) func(i int) string {
	s := m.state.Snapshot
	switch p {
	case paneClaims:
		nodes := m.orderedClaims()
		return func(i int) string { return nodes[i].claim.ID }
	case paneExperiments:
		return func(i int) string { e := m.exps.order[i]; return e.ID + " " + e.Purpose }
	case paneProcesses:
		return func(i int) string { r := m.procs[i]; return r.Experiment + " " + r.Command }
	case paneReviews:
		return func(i int) string { r := s.Reviews[i]; return r.ID + " " + r.Claim }
	}
	return nil
}

// shownOf is the indices of rows that pane p's filter lets through (nil:
// the filter is off, every row shows). The matches of rows that do not
// change with the clock are remembered until their data does.
func (m dashModel) shownOf(p pane, rows rowList) []int {
	f := m.filters[p]
	if !f.on() || !filterable(p) {
		return nil
	}
	id := m.rowID(p)
	text := func(i int) string {
		if id == nil {
			return rows.row(i)
		}
		return rows.row(i) + " " + id(i)
	}
	return m.memo.matches(p, rows, f, text)
}

func (m dashModel) shown(p pane) []int {
	if !m.filters[p].on() {
		return nil
	}
	return m.shownOf(p, m.paneRows(p))
}

// listLen is how many rows pane p shows through its filter.
func (m dashModel) listLen(p pane) int {
	if s := m.shown(p); s != nil {
		return len(s)
	}
	return m.rowCount(p)
}

// snap keeps pane p's selection on a row its filter shows.
func (m *dashModel) snap(p pane) { m.sel[p] = snapIn(m.shown(p), m.rowCount(p), m.sel[p]) }

// narrowed applies pane p's filter to the rows a pane renders: the rows
// shown, the selection's position among them, and the title with the
// filter and "n of m".
func (m dashModel) narrowed(p pane, rows rowList, title string) (rowList, int, string) {
	f := m.filters[p]
	if !filterable(p) || (!f.on() && !f.editing) {
		return rows, m.sel[p], title + m.procScale(p)
	}
	shown := m.shownOf(p, rows)
	sel := m.sel[p]
	if shown != nil {
		sel = posIn(shown, sel)
		title += fmt.Sprintf(" · %s · %d of %d", f.label(), len(shown), rows.n)
		rows = rows.picked(shown)
	} else {
		title += " · " + f.label()
	}
	return rows, max(0, sel), title + m.procScale(p)
}

// filterEmpty is the text of a pane whose filter matches no row.
func (m dashModel) filterEmpty(p pane) string {
	return "no row matches " + m.filters[p].label() + " (esc clears it)"
}

// handleFilterKey types into the focused pane's open filter prompt; ↑↓
// still move the selection among the rows it shows.
func (m dashModel) handleFilterKey(msg tea.KeyMsg) (dashModel, tea.Cmd) {
	switch msg.Type {
	case tea.KeyUp:
		return m.moveSel(-1), nil
	case tea.KeyDown:
		return m.moveSel(1), nil
	case tea.KeyCtrlC:
		return m.handleLeave()
	}
	p := m.focus
	m.filters[p], m.lastFilter = editFilter(m.filters[p], m.lastFilter, msg)
	m.snap(p)
	return m, nil
}

// handleOpenFilter is `/` on the focused pane.
func (m dashModel) handleOpenFilter() (dashModel, tea.Cmd) {
	p := m.focus
	if !filterable(p) {
		return m.say("the Study pane is not a list; tab to a list to filter it"), nil
	}
	m.filters[p] = openFilter(m.filters[p], m.lastFilter)
	m.snap(p)
	return m, nil
}

// clearsFilter reports whether msg is esc on a pane whose filter is on.
func (m dashModel) clearsFilter(msg tea.KeyMsg) bool {
	return msg.Type == tea.KeyEsc && m.filters[m.focus].on()
}

func (m dashModel) clearFilter() dashModel {
	m.lastFilter = m.filters[m.focus].query
	m.filters[m.focus] = listFilter{}
	return m
}

// filterHints are the footer while a filter prompt is open.
func filterHints() []hint {
	return []hint{{"type", "filter"}, {"↑↓", "move"}, {"enter", "keep"}, {"esc", "clear"}}
}

// wantsFilter reports whether msg opens the filter prompt.
func (m dashModel) wantsFilter(msg tea.KeyMsg) bool { return key.Matches(msg, m.c.Keys.Filter) }
