package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// Home screen messages.
type (
	studiesMsg struct {
		studies []engine.StudyEntry
		err     error
	}
	demoMsg struct {
		dir string
		err error
	}
	// newStudyMsg asks the root to show the new-study form.
	newStudyMsg struct{}
)

// homeModel lists the studies under the workspace root.
type homeModel struct {
	c             *Common
	ctx           context.Context
	studies       []engine.StudyEntry
	loaded        bool
	sel           int
	err           string
	busy          string
	width, height int
}

func newHome(c *Common, ctx context.Context) homeModel { return homeModel{c: c, ctx: ctx} }

func (m homeModel) loadCmd() tea.Cmd {
	w, ctx := m.c.Work, m.ctx
	return func() tea.Msg {
		s, err := w.Studies(ctx)
		return studiesMsg{studies: s, err: err}
	}
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
		m.loaded, m.studies, m.err = true, msg.studies, ""
		if msg.err != nil {
			m.err = msg.err.Error()
		}
		m.sel = max(0, min(m.sel, len(m.studies)-1))
	case demoMsg:
		return m.handleDemo(msg)
	case tea.KeyMsg:
		return m.handleKey(msg)
	}
	return m, nil
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
	switch {
	case key.Matches(msg, k.Quit, k.ForceQuit):
		return m, msgCmd(quitMsg{})
	case key.Matches(msg, k.Up):
		m.sel = max(0, m.sel-1)
	case key.Matches(msg, k.Down):
		m.sel = max(0, min(m.sel+1, len(m.studies)-1))
	case key.Matches(msg, k.Refresh):
		return m, m.loadCmd()
	case key.Matches(msg, k.New):
		if m.c.ReadOnly {
			m.err = "read-only: cannot start a study"
			return m, nil
		}
		return m, msgCmd(newStudyMsg{})
	case key.Matches(msg, k.Demo):
		if m.c.ReadOnly {
			m.err = "read-only: cannot start the demo"
			return m, nil
		}
		m.busy = "Creating the demo study…"
		return m, m.demoCmd()
	case key.Matches(msg, k.Enter):
		if m.sel < len(m.studies) {
			return m, msgCmd(openStudyMsg{dir: m.studies[m.sel].Dir})
		}
	}
	return m, nil
}

// View renders the home screen.
func (m homeModel) View() string {
	w, h := max(m.width, 20), max(m.height, 6)
	lines := []string{m.c.Styles.Title.Render(fit("simjecture — studies in "+m.c.Root, w)), ""}
	lines = append(lines, m.c.Styles.Dim.Render(fmt.Sprintf("  %s %-11s %-22s %s", fit("STUDY", max(8, w-44)), "STATUS", "BACKEND", "LEFT")))
	switch {
	case !m.loaded:
		lines = append(lines, "  loading…")
	case len(m.studies) == 0:
		lines = append(lines, "  No studies yet. Press n to start one, or d for the demo (no API key needed).")
	}
	listH := max(1, h-len(lines)-5)
	start := max(0, m.sel-listH+1)
	for i := start; i < len(m.studies) && i < start+listH; i++ {
		lines = append(lines, m.row(i, w))
	}
	lines = block(lines, w, h-4)
	lines = append(lines, m.footer(w)...)
	return strings.Join(lines, "\n")
}

func (m homeModel) row(i, w int) string {
	e := m.studies[i]
	status, left := e.Status, "—"
	if e.Err != "" {
		status = "unreadable"
	}
	if e.Owned && status == engine.StatusRunning {
		status = "running ●"
	}
	if !engine.Terminal(e.Status) && e.RemainingSeconds > 0 {
		left = dur(time.Duration(e.RemainingSeconds) * time.Second)
	}
	r := fmt.Sprintf("%s %-11s %-22s %s", fit(e.Name, max(8, w-44)), status, backendLabel(e.ExecutionBackend), left)
	if i == m.sel {
		return m.c.Styles.Selected.Render(fit("› "+r, w))
	}
	return "  " + r
}

// footer shows the selected study's hypothesis, a message, and the keys.
func (m homeModel) footer(w int) []string {
	var info []string
	if m.sel < len(m.studies) {
		e := m.studies[m.sel]
		text := e.Hypothesis
		if e.Err != "" {
			text = e.Err
		}
		info = wrap(text, w-2)
	}
	msg := m.busy
	if m.err != "" {
		msg = m.err
	}
	out := block(info, w, 2)
	out = append(out, fit(msg, w))
	return append(out, m.c.Styles.Bar.Render(fit("n new study · enter open · d demo · r refresh · ↑↓ move · q quit", w)))
}
