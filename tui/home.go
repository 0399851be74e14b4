package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/simjecture/simjecture/engine"
)

// Home screen messages.
type (
	studiesMsg struct {
		studies []engine.StudyEntry
		benches []engine.BenchEntry
		err     error
	}
	demoMsg struct {
		dir string
		err error
	}
	// newStudyMsg asks the root to show the new-study form; now names its
	// default campaign folder, so each form gets a fresh one.
	newStudyMsg struct{ now time.Time }
	// homeTickMsg asks the home screen to list the studies again.
	homeTickMsg struct{ gen int }
)

// homeModel lists the studies under the workspace root.
type homeModel struct {
	c             *Common
	ctx           context.Context
	studies       []engine.StudyEntry
	benches       []engine.BenchEntry // benchmark grade reports, newest first
	loaded        bool
	sel           int
	err           string
	busy          string
	width, height int
	help          bool
	listErr       string // why the last listing failed
	gen           int    // of the refresh ticks: a new chain drops the old one
	loading       bool   // a listing is in flight
	filter        listFilter
	lastFilter    string // the last filter kept or cleared, which `/` recalls
}

func newHome(c *Common, ctx context.Context) homeModel { return homeModel{c: c, ctx: ctx} }

func (m homeModel) loadCmd() tea.Cmd {
	w, ctx := m.c.Work, m.ctx
	return func() tea.Msg {
		s, err := w.Studies(ctx)
		return studiesMsg{studies: s, benches: w.BenchRuns(ctx), err: err}
	}
}

// startTicks begins a new chain of periodic refreshes (none without a Tick).
func (m homeModel) startTicks() (homeModel, tea.Cmd) {
	m.gen++
	return m, m.tickCmd()
}

func (m homeModel) tickCmd() tea.Cmd {
	if m.c.Tick <= 0 {
		return nil
	}
	gen := m.gen
	return tea.Tick(4*m.c.Tick, func(time.Time) tea.Msg { return homeTickMsg{gen: gen} })
}

// handleTick lists the studies again, unless a listing is in flight.
func (m homeModel) handleTick(msg homeTickMsg) (homeModel, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	if m.loading {
		return m, m.tickCmd()
	}
	m.loading = true
	return m, tea.Batch(m.loadCmd(), m.tickCmd())
}

func (m homeModel) newStudyCmd() tea.Cmd {
	c := m.c
	return func() tea.Msg { return newStudyMsg{now: c.now()} }
}

func (m homeModel) demoCmd() tea.Cmd {
	w, ctx := m.c.Work, m.ctx
	return func() tea.Msg {
		dir, err := w.Demo(ctx)
		return demoMsg{dir: dir, err: err}
	}
}

// Update is the home screen's dispatcher.
func (m homeModel) Update(msg tea.Msg) (homeModel, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case studiesMsg:
		return m.handleStudies(msg), nil
	case homeTickMsg:
		return m.handleTick(msg)
	case demoMsg:
		return m.handleDemo(msg)
	case tea.KeyMsg:
		return m.handleKey(msg)
	}
	return m, nil
}

// dirs are the folders of the listed studies.
func (m homeModel) dirs() map[string]bool {
	out := make(map[string]bool, len(m.studies))
	for _, e := range m.studies {
		out[e.Dir] = true
	}
	return out
}

// handleStudies shows a listing; the selection stays on its study.
func (m homeModel) handleStudies(msg studiesMsg) homeModel {
	dir := ""
	if m.sel < len(m.studies) {
		dir = m.studies[m.sel].Dir
	}
	m.loaded, m.loading, m.studies, m.benches = true, false, msg.studies, msg.benches
	m.listErr = ""
	if msg.err != nil {
		m.listErr = msg.err.Error()
	}
	for i, e := range m.studies {
		if e.Dir == dir {
			m.sel = i
		}
	}
	m.sel = snapIn(m.shown(), len(m.studies), m.sel)
	return m
}

func (m homeModel) handleDemo(msg demoMsg) (homeModel, tea.Cmd) {
	m.busy = ""
	if msg.err != nil {
		m.err = "demo: " + msg.err.Error()
		return m, nil
	}
	return m, msgCmd(openStudyMsg{dir: msg.dir, launch: true})
}

func (m homeModel) handleKey(msg tea.KeyMsg) (homeModel, tea.Cmd) {
	k := m.c.Keys
	if m.busy != "" && !key.Matches(msg, k.ForceQuit) {
		return m, nil
	}
	if m.help {
		m.help = false
		return m, nil
	}
	if m.filter.editing {
		return m.handleFilterKey(msg)
	}
	switch {
	case key.Matches(msg, k.Filter):
		m.filter = openFilter(m.filter, m.lastFilter)
		m.sel = snapIn(m.shown(), len(m.studies), m.sel)
	case msg.Type == tea.KeyEsc && m.filter.on():
		m.filter, m.lastFilter = listFilter{}, m.filter.query
	case key.Matches(msg, k.Help):
		m.help = true
	case key.Matches(msg, k.Quit, k.ForceQuit):
		return m, msgCmd(quitMsg{})
	case key.Matches(msg, k.Up):
		m.sel = stepIn(m.shown(), len(m.studies), m.sel, -1)
	case key.Matches(msg, k.Down):
		m.sel = stepIn(m.shown(), len(m.studies), m.sel, 1)
	case key.Matches(msg, k.Refresh):
		return m, m.loadCmd()
	case key.Matches(msg, k.New):
		if m.c.ReadOnly {
			m.err = "read-only: cannot start a study"
			return m, nil
		}
		return m, m.newStudyCmd()
	case key.Matches(msg, k.Demo):
		if m.c.ReadOnly {
			m.err = "read-only: cannot start the demo"
			return m, nil
		}
		m.busy = "Creating the demo study…"
		return m, m.demoCmd()
	case key.Matches(msg, k.Enter):
		if m.sel < len(m.studies) && m.visible(m.sel) {
			return m, msgCmd(openStudyMsg{dir: m.studies[m.sel].Dir})
		}
	}
	return m, nil
}

// View renders the home screen.
func (m homeModel) View() string {
	w, h := max(m.width, 20), max(m.height, 6)
	title := "simjecture — studies in " + m.c.Root
	if m.c.ReadOnly {
		title += " [read-only]"
	}
	sw := m.statusWidth()
	lines := []string{m.c.Styles.Title.Render(fit(title, w)), ""}
	lines = append(lines, m.c.Styles.Dim.Render(fmt.Sprintf("  %s %-*s %-22s %s", fit("STUDY", m.nameWidth(w)), sw, "STATUS", "BACKEND", "LEFT")))
	switch {
	case !m.loaded:
		lines = append(lines, "  loading…")
	case len(m.studies) == 0 && m.c.ReadOnly:
		lines = append(lines, "  No studies yet.")
	case len(m.studies) == 0:
		lines = append(lines, "  No studies yet. Press n to start one, or d for the demo (no API key needed).")
	}
	bench := m.benchLines(w, h)
	// The benchmark runs never take the title, the list's header or the
	// footer's room (a screen of a few lines, or the first frame, drawn
	// before the terminal's size is known).
	bench = bench[:min(len(bench), max(0, h-4-len(lines)))]
	listH := max(1, h-len(lines)-5-len(bench))
	lines[1] = m.listLine(listH, w)
	lines = append(lines, m.rows(listH, w, sw)...)
	lines = append(block(lines, w, h-4-len(bench)), bench...)
	if m.help {
		lines = overlay(lines, helpBox("Keys: home", m.hints()), w)
	}
	lines = append(lines, m.footer(w)...)
	return strings.Join(lines, "\n")
}

// nameWidth is the width of the STUDY column.
func (m homeModel) nameWidth(w int) int { return max(8, w-34-m.statusWidth()) }

// status is the STATUS column of study e.
func (m homeModel) status(e engine.StudyEntry) string {
	switch {
	case e.Err != "":
		return "unreadable"
	case e.Owned && e.Status == engine.StatusRunning:
		return "running ●"
	}
	return string(e.Status)
}

// statusWidth is the width of the STATUS column: its longest value.
func (m homeModel) statusWidth() int {
	w := len("STATUS")
	for _, e := range m.studies {
		w = max(w, ansi.StringWidth(m.status(e)))
	}
	return w
}

func (m homeModel) row(i, w, sw int) string {
	e := m.studies[i]
	status, left := m.status(e), "—"
	if !engine.Terminal(e.Status) && e.RemainingSeconds > 0 {
		left = dur(time.Duration(e.RemainingSeconds) * time.Second)
	}
	st := statusStyle(m.c.Styles, status)
	if i == m.sel {
		st = lipgloss.NewStyle()
	}
	r := fmt.Sprintf("%s %s %-22s %s", fit(e.Name, m.nameWidth(w)), padStyled(st, status, sw), backendLabel(e.ExecutionBackend), left)
	if i == m.sel {
		return m.c.Styles.Selected.Render(fit("› "+r, w))
	}
	return "  " + r
}

// hints are the home keys that can act now.
func (m homeModel) hints() []hint {
	k := m.c.Keys
	var hs []hint
	if !m.c.ReadOnly {
		hs = append(hs, hintOf(k.New))
	}
	if m.filter.editing {
		return filterHints()
	}
	if len(m.studies) > 0 {
		hs = append(hs, hintOf(k.Enter), hintOf(k.Filter))
	}
	if !m.c.ReadOnly {
		hs = append(hs, hintOf(k.Demo))
	}
	hs = append(hs, hintOf(k.Refresh))
	if len(m.studies) > 1 {
		hs = append(hs, hint{"↑↓", "move"})
	}
	return append(hs, hintOf(k.Help), hintOf(k.Quit))
}

// footer shows the selected study's hypothesis, a message, and the keys.
func (m homeModel) footer(w int) []string {
	var info []string
	if m.sel < len(m.studies) && m.visible(m.sel) {
		e := m.studies[m.sel]
		text := e.Hypothesis
		if e.Err != "" {
			text = e.Err
		}
		info = wrap(text, w-2)
	}
	msg := m.busy
	switch {
	case m.err != "":
		msg = m.err
	case m.listErr != "":
		msg = m.listErr
	}
	out := block(info, w, 2)
	out = append(out, fit(msg, w))
	return append(out, m.c.Styles.Bar.Render(fit(footerText(m.hints(), w), w)))
}
