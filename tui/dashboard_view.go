package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/simjecture/simjecture/engine"
)

// sidebarWidth is the isolation warning's width beside the panes.
const sidebarWidth = 30

// View renders the dashboard; it is a pure function of the model.
func (m dashModel) View() string {
	w, h := max(m.width, 20), max(m.height, 6)
	if m.log.open {
		return m.log.View(m.c, m.dir, w, h)
	}
	if !m.loaded {
		msg := "Opening " + m.dir + " …"
		if m.err != "" {
			msg = "Could not open " + m.dir + ": " + m.err
		}
		return strings.Join(block(append(wrap(msg, w), "", "q leave"), w, h), "\n")
	}
	lines := append([]string{m.header(w)}, m.attentionLines(w)...)
	bar, note := m.statusBar(w)
	body := m.body(w, m.bodyHeight())
	if m.help {
		body = overlay(body, m.helpLines(), w)
	}
	if m.steer.open {
		body = overlay(body, m.steerLines(w), w)
	}
	if m.leaveErr != "" {
		lines = append(lines, m.leaveErrLine(w))
	}
	lines = append(lines, body...)
	lines = append(lines, note...)
	lines = append(lines, bar)
	return strings.Join(lines, "\n")
}

// attentionLines is the provider's or the study's message, wrapped.
func (m dashModel) attentionLines(w int) []string {
	a := m.attention()
	if a == "" {
		return nil
	}
	var out []string
	for _, l := range clip(wrap("⚠ "+a, w), 3, "… enter on Study shows it all") {
		out = append(out, m.c.Styles.Warn.Render(fit(l, w)))
	}
	return out
}

// bodyHeight is the number of lines between the header and the footer.
func (m dashModel) bodyHeight() int {
	w, h := max(m.width, 20), max(m.height, 6)
	_, note := m.statusBar(w)
	leave := 0
	if m.leaveErr != "" {
		leave = 1
	}
	return h - 1 - len(m.attentionLines(w)) - leave - len(note) - 1
}

// mainWidth is the width of the panes (the sidebar takes the rest).
func (m dashModel) mainWidth() int {
	w := max(m.width, 20)
	if m.warningShown() && w >= 60 {
		return w - sidebarWidth - 1
	}
	return w
}

// clip keeps at most n lines, the last replaced by more when cut.
func clip(lines []string, n int, more string) []string {
	if len(lines) <= n {
		return lines
	}
	return append(lines[:n-1:n-1], more)
}

// header is the first line: the study, its status, and the countdown.
func (m dashModel) header(w int) string {
	s := m.state.Snapshot
	right := ""
	if !s.Deadline.IsZero() && !engine.Terminal(s.Status) {
		right = " ⏱ " + dur(max(0, s.Deadline.Sub(m.now))) + " left"
	}
	left := fmt.Sprintf("simjecture · %s · %s · %s", baseName(m.dir), strings.ToUpper(string(s.Status)), s.Activity)
	return m.c.Styles.Title.Render(fit(left, w-ansi.StringWidth(right))) + right
}

func baseName(dir string) string {
	if i := strings.LastIndexByte(dir, '/'); i >= 0 && i < len(dir)-1 {
		return dir[i+1:]
	}
	return dir
}

// attention is the provider's reconnect or attention message, if any.
func (m dashModel) attention() string {
	p := m.state.Snapshot.Provider
	if p.Attention != nil || p.NextRetryAt != nil {
		return m.providerLine()
	}
	if m.state.Snapshot.LastError != "" && m.state.Snapshot.Status == engine.StatusPausedExternalError {
		return m.state.Snapshot.LastError
	}
	if w := m.state.Snapshot.UnreachableWorkers; len(w) > 0 && m.state.Snapshot.Status == engine.StatusRunning {
		return "no machine of the pool can be reached: " + strings.Join(w, ", ") +
			" unreachable; queued experiments wait (simjecture worker check ID)"
	}
	return ""
}

// body is everything between the header and the status bar.
func (m dashModel) body(w, h int) []string {
	if h <= 0 {
		return nil
	}
	var main []string
	mainW, side := m.mainWidth(), m.warningShown()
	switch {
	case side && w < 60:
		return block(m.warningLines(w), w, h)
	case m.detail:
		main = m.detailView(mainW, h)
	default:
		main = m.panes(mainW, h)
	}
	if mainW == w {
		return main
	}
	return hjoin(m.c.Styles.Dim.Render("│"), main, block(m.warningLines(sidebarWidth), sidebarWidth, h))
}

// panes lays out the six panes in four bands.
func (m dashModel) panes(w, h int) []string {
	lw := w / 2
	rw := w - lw - 1
	narrow := w < 70
	study, claims := m.studyLines(lw-2), m.claimList(rw)
	exps, procs := m.experimentList(narrow), m.procList(w)
	reviews, events := m.reviewList(lw), m.eventList()
	hs := bandHeights(h, []int{
		1 + max(len(study), claims.n), 2 + max(1, exps.n), 2 + max(1, procs.n), 1 + max(reviews.n, events.n, 1),
	})
	sep := m.c.Styles.Dim.Render("│")
	var out []string
	out = append(out, hjoin(sep, m.pane(paneStudy, listOf(study), "", lw, hs[0]), m.pane(paneClaims, claims, "", rw, hs[0]))...)
	out = append(out, m.pane(paneExperiments, exps, m.experimentHeader(narrow), w, hs[1])...)
	out = append(out, m.pane(paneProcesses, procs, procHeader(w), w, hs[2])...)
	if hs[3] > 0 {
		out = append(out, hjoin(sep, m.pane(paneReviews, reviews, "", lw, hs[3]), m.pane(paneEvents, events, "", rw, hs[3]))...)
	}
	return block(out, w, h)
}

// bandHeights shares h lines among bands that want the given heights:
// each gets up to 3 lines first, then lines go round in turn to the bands
// that want more, and whatever is left goes to the last band.
func bandHeights(h int, want []int) []int {
	got := make([]int, len(want))
	for i := range want {
		got[i] = min(3, want[i], max(0, h))
		h -= got[i]
	}
	for h > 0 {
		gave := false
		for i := range want {
			if h > 0 && got[i] < want[i] {
				got[i]++
				h--
				gave = true
			}
		}
		if !gave {
			got[len(got)-1] += h
			break
		}
	}
	return got
}

// pane renders one pane: title, optional column header, the rows in view.
func (m dashModel) pane(p pane, rows rowList, header string, w, h int) []string {
	if h <= 0 {
		return nil
	}
	focused := m.focus == p
	title := paneNames[p]
	if n := rows.n; p != paneStudy && n > 0 {
		title = fmt.Sprintf("%s (%d)", title, n)
		switch p {
		case paneExperiments:
			title = m.experimentTitle(n)
		case paneEvents:
			title = m.activityTitle(n)
		}
	}
	rows, sel, title := m.narrowed(p, rows, title)
	room := h - 1
	if header != "" && h > 1 {
		room--
	}
	out := []string{m.titleWith(title, position(sel, rows.n, room), focused, w)}
	if header != "" && h > 1 {
		out = append(out, m.c.Styles.Dim.Render("  "+header))
	}
	if rows.n == 0 && m.filters[p].on() {
		return block(append(out, "  "+m.c.Styles.Dim.Render(m.filterEmpty(p))), w, h)
	}
	if rows.n == 0 { // the empty state is text, not a row to select
		return block(append(out, "  "+m.c.Styles.Dim.Render(emptyText(p))), w, h)
	}
	out = append(out, m.window(rows, sel, h-len(out), focused)...)
	return block(out, w, h)
}

func emptyText(p pane) string {
	switch p {
	case paneProcesses:
		return "no live processes (the supervisor is not running)"
	case paneExperiments:
		return "no experiments yet"
	case paneReviews:
		return "no reviews yet"
	case paneEvents:
		return "no events yet"
	}
	return "—"
}

// warningLines is the isolation warning sidebar.
func (m dashModel) warningLines(w int) []string {
	d, _ := engine.DescribeBackend(string(m.state.Snapshot.ExecutionBackend))
	what, body := d.Title, d.Explains
	text := []string{m.c.Styles.Warn.Render("⚠ Cooperative execution"), ""}
	for _, para := range []string{what, "is not a security sandbox.", "", body, "",
		"An experiment can read and change every file this account can, and reach the network.",
		"Run only code you trust; limits and cleanup still apply.", ""} {
		if para == "" {
			text = append(text, "")
			continue
		}
		text = append(text, wrap(para, w-1)...)
	}
	text = append(text, "x/esc dismiss · w reopen")
	out := make([]string, 0, len(text))
	for _, l := range text {
		out = append(out, " "+l)
	}
	return out
}

// statusBar is the last line: the backend mode indicator, the ownership,
// and the keys that can act, a message or a confirmation prompt. A
// message too long for the bar comes back as wrapped lines above it.
func (m dashModel) statusBar(w int) (string, []string) {
	mode := "[" + backendLabel(string(m.state.Snapshot.ExecutionBackend)) + "]"
	if m.cooperative() {
		mode = m.c.Styles.Warn.Render(mode)
	}
	if m.state.Snapshot.RecordProtection == engine.ProtectionNone {
		mode += " " + m.c.Styles.Warn.Render("[record not protected from the agent]")
	}
	left := mode + " " + m.ownership() + " │ "
	room := w - ansi.StringWidth(left)
	var tail string
	var note []string
	switch {
	case m.confirm == "cancel":
		tail = "Cancel the study? y yes · n no"
	case m.confirm == "leave" && w >= 100:
		tail = "Pause the study and leave? y yes · n no · b leave it running"
	case m.confirm == "leave":
		tail = "Leave? y pause · b keep running · n stay"
	case m.flash != "" && ansi.StringWidth(m.flash) <= room:
		tail = m.flash
	default:
		if m.flash != "" {
			note = clip(wrap(m.flash, w), 3, "…")
		}
		tail = footerText(m.hints(), room)
	}
	return m.c.Styles.Bar.Render(fit(left+tail, w)), note
}

// ownership says who runs the study: this process (`supervising`),
// another live one (`attached`), or nobody (`finished` for a study that
// can no longer resume, else `stopped`: paused or interrupted); `read-only`
// first.
func (m dashModel) ownership() string {
	switch {
	case m.c.ReadOnly:
		return "read-only"
	case m.state.Supervising:
		return "supervising"
	case m.state.OtherOwner:
		return "attached"
	case engine.Terminal(m.state.Snapshot.Status):
		return "finished"
	}
	return "stopped"
}
