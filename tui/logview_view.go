package tui

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// bodyHeight is the number of log rows between the viewer's two header
// lines and its status bar.
func bodyHeight(h int) int { return max(1, max(h, 4)-3) }

// all reports whether the viewer shows every stream, labelled.
func (m logModel) all() bool { return m.tab == len(m.streams) }

// shows reports whether stream i is on screen.
func (m logModel) shows(i int) bool { return m.all() || m.tab == i }

// segLen is the number of lines stream i takes in the view: a label when
// all streams show, and its lines or a placeholder.
func (m logModel) segLen(i int) int {
	n := max(1, m.streams[i].count())
	if m.all() {
		n++
	}
	return n
}

// segmentStart is the first line of stream i in the view.
func (m logModel) segmentStart(i int) int {
	if !m.all() {
		return 0
	}
	n := 0
	for j := range i {
		n += m.segLen(j)
	}
	return n
}

// lineCount is the number of lines in the view.
func (m logModel) lineCount() int {
	if !m.all() {
		return m.segLen(m.tab)
	}
	return m.segmentStart(len(m.streams))
}

// lineAt is line n of the view.
func (m logModel) lineAt(n int) string {
	for i := range m.streams {
		if !m.shows(i) {
			continue
		}
		if l := m.segLen(i); n >= l {
			n -= l
			continue
		}
		s := &m.streams[i]
		if m.all() {
			if n == 0 {
				return "── " + m.streamLabel(i) + " ──"
			}
			n--
		}
		if s.count() == 0 {
			return m.placeholder(i)
		}
		return s.line(n)
	}
	return ""
}

func (m logModel) streamLabel(i int) string {
	if m.target.Experiment == "" && m.streams[i].name == "stdout" {
		return "output"
	}
	return m.streams[i].name
}

func (m logModel) placeholder(i int) string {
	switch {
	case !m.loaded:
		return "reading…"
	case m.streams[i].missing && m.place.Dir == "":
		return "(the experiment has not started yet)"
	case m.streams[i].missing:
		return "(no " + m.streams[i].name + " yet)"
	}
	return "(empty)"
}

// rows is how line n wraps at width w.
func (m logModel) rows(n, w int) []string {
	l := m.lineAt(n)
	if l == "" {
		return []string{""}
	}
	return strings.Split(ansi.Hardwrap(l, w, true), "\n")
}

// bottomTop is the first line shown when the view ends at the last line.
func (m logModel) bottomTop(w, h int) int {
	w, bh, n := max(w, 1), bodyHeight(h), m.lineCount()
	used := 0
	for i := n - 1; i >= 0; i-- {
		used += len(m.rows(i, w))
		if used >= bh {
			return i
		}
	}
	return 0
}

// firstShown is the first line on screen.
func (m logModel) firstShown(w, h int) int {
	if m.follow {
		return m.bottomTop(w, h)
	}
	return min(m.top, m.bottomTop(w, h))
}

// View renders the viewer at w×h; it is a pure function of the model.
func (m logModel) View(c *Common, dir string, w, h int) string {
	w, h = max(w, 20), max(h, 4)
	bh := bodyHeight(h)
	top := m.firstShown(w, h)
	var body []string
	last := top
	for i := top; i < m.lineCount() && len(body) < bh; i++ {
		body, last = append(body, m.rows(i, w)...), i
	}
	if m.follow && len(body) > bh { // the first line shows its end
		body = body[len(body)-bh:]
	}
	lines := []string{c.Styles.Title.Render(fit(m.title(), w)), fit(m.tabBar(dir, w), w)}
	lines = append(lines, block(body, w, bh)...)
	lines = append(lines, c.Styles.Bar.Render(fit(m.statusLine(top, last, w), w)))
	return strings.Join(lines, "\n")
}

func (m logModel) title() string {
	if m.target.Experiment == "" {
		return fmt.Sprintf("Turn %d · transcript", m.target.Turn)
	}
	state := "reading…"
	switch {
	case m.loaded && m.place.Live:
		state = "running · live"
	case m.loaded && m.place.Dir != "":
		state = "finished · head and tail"
	case m.loaded:
		state = "not started"
	}
	return "Output of " + m.target.Experiment + " · " + state
}

// tabBar names the streams, the shown one in brackets, and on the right
// the folder the logs are read from.
func (m logModel) tabBar(dir string, w int) string {
	names := make([]string, 0, len(m.streams)+1)
	for i := range m.streams {
		names = append(names, m.streamLabel(i))
	}
	names = append(names, "all")
	for i, n := range names {
		if i == m.tab {
			names[i] = "[" + n + "]"
		} else {
			names[i] = " " + n + " "
		}
	}
	left := strings.Join(names, " ")
	where := m.place.Dir
	if rel, err := filepath.Rel(dir, where); err == nil && where != "" {
		where = rel
	}
	if pad := w - ansi.StringWidth(left) - ansi.StringWidth(where); pad >= 2 {
		return left + strings.Repeat(" ", pad) + where
	}
	return left
}

func (m logModel) statusLine(top, last, w int) string {
	mode := "[following]"
	if !m.follow {
		mode = "[paused]"
	}
	pos := fmt.Sprintf("lines %d–%d of %d", top+1, last+1, m.lineCount())
	tail := "↑↓ PgUp/PgDn g/G scroll · f follow · tab stream · esc back"
	if w < 100 {
		tail = "↑↓ pgup/dn g/G · f follow · tab · esc"
	}
	if m.err != "" {
		tail = "could not read: " + m.err
	}
	return mode + " " + pos + " │ " + tail
}
