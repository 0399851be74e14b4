package tui

import (
	"strings"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// listFilter is the `/` filter of one list: the list shows only the rows
// whose text (or id) contains query, case-insensitive. While editing, the
// prompt is open and every key types into it.
type listFilter struct {
	query   string
	editing bool
}

// on reports whether the filter narrows its list.
func (f listFilter) on() bool { return f.query != "" }

// openFilter is `/`: the prompt opens on the current filter, or on the
// last filter kept (or cleared) when there is none.
func openFilter(f listFilter, last string) listFilter {
	if f.query == "" {
		f.query = last
	}
	f.editing = true
	return f
}

// editFilter applies one key to an open prompt: enter keeps the filter,
// esc clears it, backspace and ctrl+u delete, anything else types. It
// returns the filter and the last filter to recall.
func editFilter(f listFilter, last string, msg tea.KeyMsg) (listFilter, string) {
	switch msg.Type {
	case tea.KeyEnter:
		f.editing = false
		if f.query != "" {
			last = f.query
		}
	case tea.KeyEsc:
		if f.query != "" {
			last = f.query
		}
		f = listFilter{}
	case tea.KeyBackspace:
		if _, n := utf8.DecodeLastRuneInString(f.query); n > 0 {
			f.query = f.query[:len(f.query)-n]
		}
	case tea.KeyCtrlU:
		f.query = ""
	case tea.KeySpace:
		f.query += " "
	case tea.KeyRunes:
		f.query += string(msg.Runes)
	}
	return f, last
}

// label is what a title shows of the filter: "/query", with a cursor
// while the prompt is open.
func (f listFilter) label() string {
	switch {
	case f.editing:
		return "/" + f.query + "▏"
	case f.on():
		return "/" + f.query
	}
	return ""
}

// matching is the indices of the texts that contain the filter's query,
// case-insensitive, with colours ignored; nil when the filter is off.
func (f listFilter) matching(texts []string) []int {
	if !f.on() {
		return nil
	}
	out := []int{}
	for i, t := range texts {
		if f.match(t) {
			out = append(out, i)
		}
	}
	return out
}

// match reports whether text contains the filter's query, case-insensitive,
// with colours ignored.
func (f listFilter) match(text string) bool {
	return strings.Contains(strings.ToLower(ansi.Strip(text)), strings.ToLower(f.query))
}

// stepIn moves the row index sel by d among the shown rows (all n rows
// when shown is nil), landing on a shown row.
func stepIn(shown []int, n, sel, d int) int {
	if shown == nil {
		return max(0, min(sel+d, n-1))
	}
	if len(shown) == 0 {
		return sel
	}
	pos := max(0, min(posIn(shown, sel)+d, len(shown)-1))
	return shown[pos]
}

// snapIn keeps the row index sel in range and on a shown row: the first
// shown row at or after it, else the last shown one.
func snapIn(shown []int, n, sel int) int {
	sel = max(0, min(sel, n-1))
	if len(shown) == 0 {
		return sel
	}
	return shown[posIn(shown, sel)]
}

// posIn is the position of row sel among the shown rows (sorted): the
// first at or after it, else the last.
func posIn(shown []int, sel int) int {
	for i, r := range shown {
		if r >= sel {
			return i
		}
	}
	return len(shown) - 1
}
