package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// screen is what the root model shows.
type screen int

const (
	screenHome screen = iota
	screenForm
	screenReview
	screenDash
)

// Start says what the UI opens with.
type Start struct {
	// Campaign opens the dashboard of that study (attach, or resume on r).
	Campaign string
	// Study is a study this process already supervises (runDashboard).
	Study Study
	// Now is the clock reading at start (tests fix it).
	Now time.Time
}

// Model is the root model: it only routes between the screens.
type Model struct {
	c        *Common
	ctx      context.Context
	screen   screen
	home     homeModel
	form     formModel
	review   reviewModel
	dash     dashModel
	gen      int
	fromHome bool
	now      time.Time
	init     tea.Cmd
	width    int
	height   int
}

// NewModel returns the root model for start.
func NewModel(ctx context.Context, c *Common, start Start) Model {
	m := Model{c: c, ctx: ctx, now: start.Now, home: newHome(c, ctx), gen: 1}
	switch {
	case start.Study != nil:
		m.screen, m.dash = screenDash, newDash(c, ctx, m.gen, start.Study.Dir(), start.Now)
		m.init = msgCmd(studyOpenedMsg{gen: m.gen, study: start.Study})
	case start.Campaign != "":
		m.screen, m.dash = screenDash, newDash(c, ctx, m.gen, start.Campaign, start.Now)
		m.init = m.dash.openCmd(false)
	default:
		var tick tea.Cmd
		m.home, tick = m.home.startTicks()
		m.screen, m.fromHome, m.init = screenHome, true, tea.Batch(m.home.loadCmd(), tick)
	}
	return m
}

// Init starts loading the first screen.
func (m Model) Init() tea.Cmd { return m.init }

// Update routes navigation messages itself and everything else to the
// screen it belongs to.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		return m.handleResize(msg)
	case openStudyMsg:
		return m.handleOpen(msg)
	case newStudyMsg:
		m.screen, m.form = screenForm, newForm(m.c, m.ctx, msg.now, m.home.dirs())
		m.form, _ = m.form.Update(tea.WindowSizeMsg{Width: m.width, Height: m.height})
		return m, m.form.probeCmd()
	case reviewMsg:
		m.screen, m.review = screenReview, newReview(m.c, m.ctx, msg)
		m.review, _ = m.review.Update(tea.WindowSizeMsg{Width: m.width, Height: m.height})
	case backToFormMsg:
		m.screen = screenForm
	case homeMsg:
		m.screen, m.fromHome = screenHome, true
		return m.showHome()
	case homeTickMsg:
		if m.screen != screenHome { // the chain ends; showHome starts a new one
			return m, nil
		}
		m.home, cmd = m.home.Update(msg)
	case leftMsg:
		return m.handleLeft(msg)
	case quitMsg:
		return m, tea.Quit
	case studiesMsg, demoMsg:
		m.home, cmd = m.home.Update(msg)
	case probesMsg, formErrMsg:
		m.form, cmd = m.form.Update(msg)
	case createdMsg:
		m.review, cmd = m.review.Update(msg)
	case continueMsg:
		return m.handleContinue(msg)
	case studyOpenedMsg, stateMsg, procsMsg, eventsMsg, tickMsg, controlDoneMsg, handedOverMsg, evidenceMsg, historyMsg, steerDoneMsg:
		m.dash, cmd = m.dash.Update(msg)
	case logMsg:
		m.dash, cmd = m.dash.Update(msg)
	case tea.KeyMsg:
		return m.handleKey(msg)
	}
	return m, cmd
}

func (m Model) handleResize(msg tea.WindowSizeMsg) (tea.Model, tea.Cmd) {
	m.width, m.height = msg.Width, msg.Height
	m.home, _ = m.home.Update(msg)
	m.form, _ = m.form.Update(msg)
	m.review, _ = m.review.Update(msg)
	m.dash, _ = m.dash.Update(msg)
	return m, nil
}

func (m Model) handleOpen(msg openStudyMsg) (tea.Model, tea.Cmd) {
	m.gen++
	m.screen, m.dash = screenDash, newDash(m.c, m.ctx, m.gen, msg.dir, m.dash.now)
	if m.dash.now.IsZero() {
		m.dash.now = m.now
	}
	m.dash, _ = m.dash.Update(tea.WindowSizeMsg{Width: m.width, Height: m.height})
	return m, m.dash.openCmd(msg.launch)
}

// handleLeft goes back home (when the UI started there) or quits.
func (m Model) handleLeft(msg leftMsg) (tea.Model, tea.Cmd) {
	if msg.gen != m.dash.gen {
		return m, nil
	}
	if !m.fromHome {
		return m, tea.Quit
	}
	m.gen++
	m.dash.gen = m.gen // results still in flight for the old dashboard are now stale
	m.screen = screenHome
	return m.showHome()
}

// showHome lists the studies now and every few seconds while home shows.
func (m Model) showHome() (tea.Model, tea.Cmd) {
	var tick tea.Cmd
	m.home, tick = m.home.startTicks()
	return m, tea.Batch(m.home.loadCmd(), tick)
}

func (m Model) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		return m.handleRunes(msg)
	}
	var cmd tea.Cmd
	switch m.screen {
	case screenHome:
		m.home, cmd = m.home.Update(msg)
	case screenForm:
		m.form, cmd = m.form.Update(msg)
	case screenReview:
		m.review, cmd = m.review.Update(msg)
	case screenDash:
		m.dash, cmd = m.dash.Update(msg)
	}
	return m, cmd
}

// handleRunes handles each of several runes that arrived in one read as
// its own key: keys typed (or sent) faster than the terminal is read come
// as one KeyMsg, and `jj` must move twice rather than match no binding.
// A paste stays whole.
func (m Model) handleRunes(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	cmds := make([]tea.Cmd, 0, len(msg.Runes))
	for _, r := range msg.Runes {
		next, cmd := m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
		m = next.(Model)
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

// View renders the current screen.
func (m Model) View() string {
	switch m.screen {
	case screenForm:
		return m.form.View()
	case screenReview:
		return m.review.View()
	case screenDash:
		return m.dash.View()
	}
	return m.home.View()
}
