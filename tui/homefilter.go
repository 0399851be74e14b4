package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
)

// The home screen's side of the `/` filter. m.sel stays the index of a
// study in m.studies; the list shows only the studies the filter lets
// through, and the selection moves among them.

// shown is the indices of the studies the filter lets through (nil: all).
func (m homeModel) shown() []int {
	if !m.filter.on() {
		return nil
	}
	texts := make([]string, len(m.studies))
	for i, e := range m.studies {
		texts[i] = e.Name + " " + m.status(e) + " " + backendLabel(e.ExecutionBackend) + " " + e.Dir
	}
	return m.filter.matching(texts)
}

// visible reports whether study i shows through the filter.
func (m homeModel) visible(i int) bool {
	s := m.shown()
	return s == nil || len(s) > 0 && s[posIn(s, i)] == i
}

// rows are the list's lines in listH lines, the selection kept in view.
func (m homeModel) rows(listH, w, sw int) []string {
	idx := m.shown()
	if idx == nil {
		idx = make([]int, len(m.studies))
		for i := range idx {
			idx[i] = i
		}
	}
	if len(idx) == 0 && m.filter.on() {
		return []string{"  no study matches " + m.filter.label() + " (esc clears it)"}
	}
	var out []string
	for k := windowStart(posIn(idx, m.sel), listH); k < len(idx) && len(out) < listH; k++ {
		out = append(out, m.row(idx[k], w, sw))
	}
	return out
}

// listLine is the line above the list: the filter and "n of m", and the
// position when the list does not fit ("9–16 of 40").
func (m homeModel) listLine(listH, w int) string {
	n := len(m.studies)
	idx := m.shown()
	text := ""
	if m.filter.on() || m.filter.editing {
		text = fmt.Sprintf("  filter %s · %d of %d", m.filter.label(), len(idx), n)
		if idx == nil {
			text = "  filter " + m.filter.label()
		}
	}
	shownN := n
	if idx != nil {
		shownN = len(idx)
	}
	sel := m.sel
	if len(idx) > 0 {
		sel = posIn(idx, m.sel)
	}
	if p := position(sel, shownN, listH); p != "" {
		text = fit(text, max(0, w-len([]rune(p))-1)) + " " + p
	}
	return m.c.Styles.Dim.Render(fit(text, w))
}

// handleFilterKey types into the open filter prompt; ↑↓ still move.
func (m homeModel) handleFilterKey(msg tea.KeyMsg) (homeModel, tea.Cmd) {
	switch msg.Type {
	case tea.KeyUp:
		m.sel = stepIn(m.shown(), len(m.studies), m.sel, -1)
		return m, nil
	case tea.KeyDown:
		m.sel = stepIn(m.shown(), len(m.studies), m.sel, 1)
		return m, nil
	case tea.KeyCtrlC:
		return m, msgCmd(quitMsg{})
	}
	m.filter, m.lastFilter = editFilter(m.filter, m.lastFilter, msg)
	m.sel = snapIn(m.shown(), len(m.studies), m.sel)
	return m, nil
}
