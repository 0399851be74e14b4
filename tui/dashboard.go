package tui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// pane is one focusable part of the dashboard.
type pane int

const (
	paneStudy pane = iota
	paneClaims
	paneExperiments
	paneProcesses
	paneReviews
	paneEvents
	paneCount
)

var paneNames = [paneCount]string{"Study", "Claims", "Experiments", "Processes", "Reviews", "Activity"}

// maxEvents bounds the Activity window (activity_history.go), and
// followBack is how many events before the newest a follower replays.
const maxEvents, followBack = 512, 32

// Dashboard messages; each carries the generation of the study it is about,
// and the dashboard ignores any other (a stale result of a study it left).
type (
	studyOpenedMsg struct {
		gen   int
		study Study
		err   error
	}
	stateMsg struct {
		gen   int
		state StudyState
		err   error
	}
	procsMsg struct {
		gen  int
		rows []engine.ProcSample
		err  error
	}
	tickMsg struct {
		gen int
		now time.Time
	}
	controlDoneMsg struct {
		gen     int
		command engine.Command
		err     error
	}
	// leftMsg says the operator left the dashboard (after pausing if asked).
	leftMsg struct{ gen int }
)

// dashModel is the study dashboard.
type dashModel struct {
	c      *Common
	ctx    context.Context
	gen    int
	dir    string
	study  Study
	state  StudyState
	loaded bool
	procs  []procRow // the process monitor's rows, grouped by experiment
	events []engine.Event
	// dropped is how many events the bridge dropped (coalesced into a refresh).
	dropped int64
	now     time.Time

	width, height int
	focus         pane
	sel           [paneCount]int
	warnDismissed bool
	confirm       string // "", "cancel" or "leave"
	help          bool
	detail        bool
	detailScroll  int
	flash         string
	leaveErr      string // why the last hand-over to a background supervisor failed
	flashTicks    int
	err           string
	log           logModel       // the log viewer, when open
	evidence      reviewEvidence // the review detail's measured values
	hist          eventHistory   // where the Activity window stands
	steer         steerModel     // the steering overlay (steer.go)

	refreshing, sampling, controlling, dirty bool
	ticks                                    int

	// filters are the `/` filters of the list panes; lastFilter is the
	// last one kept or cleared, which `/` recalls.
	filters    [paneCount]listFilter
	lastFilter string

	// evAnchor is the sequence number of the selected Activity event (0:
	// follow the newest), so the selection stays on its event.
	evAnchor int64

	exps    expTable   // the Experiments pane's table of this snapshot (rowlist.go)
	procGen int64      // dataGen of the process sample in procs
	memo    *shownMemo // the filters' matches (rowlist.go)
}

func newDash(c *Common, ctx context.Context, gen int, dir string, now time.Time) dashModel {
	return dashModel{c: c, ctx: ctx, gen: gen, dir: dir, now: now, focus: paneClaims, memo: &shownMemo{}}
}

// openCmd opens the study through the workspace.
func (m dashModel) openCmd(launch bool) tea.Cmd {
	w, ctx, dir, gen := m.c.Work, m.ctx, m.dir, m.gen
	return func() tea.Msg {
		s, err := w.Open(ctx, dir, launch, gen)
		return studyOpenedMsg{gen: gen, study: s, err: err}
	}
}

func (m dashModel) refreshCmd() tea.Cmd {
	s, ctx, gen := m.study, m.ctx, m.gen
	return func() tea.Msg {
		st, err := s.Refresh(ctx)
		return stateMsg{gen: gen, state: st, err: err}
	}
}

func (m dashModel) sampleCmd() tea.Cmd {
	s, ctx, gen := m.study, m.ctx, m.gen
	return func() tea.Msg {
		rows, err := s.Processes(ctx)
		return procsMsg{gen: gen, rows: rows, err: err}
	}
}

// tickCmd schedules the next tick; with no Tick period (tests) there is none.
func (m dashModel) tickCmd() tea.Cmd {
	if m.c.Tick <= 0 {
		return nil
	}
	gen := m.gen
	return tea.Tick(m.c.Tick, func(t time.Time) tea.Msg { return tickMsg{gen: gen, now: t} })
}

func (m dashModel) controlCmd(command engine.Command) tea.Cmd {
	s, ctx, gen := m.study, m.ctx, m.gen
	return func() tea.Msg {
		return controlDoneMsg{gen: gen, command: command, err: s.Control(ctx, command)}
	}
}

// leaveCmd pauses the study this process supervises, then reports leftMsg.
func (m dashModel) leaveCmd() tea.Cmd {
	s, ctx, gen := m.study, m.ctx, m.gen
	return func() tea.Msg {
		_ = s.Control(ctx, engine.Pause)
		return leftMsg{gen: gen}
	}
}

// Update is the dashboard's dispatcher.
func (m dashModel) Update(msg tea.Msg) (dashModel, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case studyOpenedMsg:
		return m.handleOpened(msg)
	case stateMsg:
		return m.handleState(msg)
	case procsMsg:
		return m.handleProcs(msg)
	case eventsMsg:
		return m.handleEvents(msg)
	case tickMsg:
		return m.handleTick(msg)
	case controlDoneMsg:
		return m.handleControlDone(msg)
	case logMsg:
		return m.handleLogMsg(msg)
	case handedOverMsg:
		return m.handleHandedOver(msg)
	case evidenceMsg:
		return m.handleEvidence(msg)
	case historyMsg:
		return m.handleHistory(msg)
	case steerDoneMsg:
		return m.handleSteerDone(msg)
	case tea.KeyMsg:
		return m.handleKey(msg)
	}
	return m, nil
}

func (m dashModel) handleOpened(msg studyOpenedMsg) (dashModel, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	if msg.err != nil {
		m.err = msg.err.Error()
		return m, nil
	}
	m.study, m.refreshing, m.sampling = msg.study, true, true
	return m, tea.Batch(m.refreshCmd(), m.sampleCmd(), m.tickCmd())
}

func (m dashModel) handleState(msg stateMsg) (dashModel, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	m.refreshing = false
	if msg.err != nil {
		m.err = msg.err.Error()
	} else {
		prev := m.experimentOrder()
		m.state, m.loaded, m.err = msg.state, true, ""
		m.exps = m.buildExpTable()
		m = m.keepExperimentSelection(prev)
		m.clampSelections()
		if m.confirm == "leave" && !m.state.Supervising { // nothing left to pause: leave as asked
			m.confirm = ""
			return m, msgCmd(leftMsg{gen: m.gen})
		}
	}
	if m.dirty {
		m.dirty, m.refreshing = false, true
		return m, m.refreshCmd()
	}
	return m, nil
}

func (m dashModel) handleProcs(msg procsMsg) (dashModel, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	m.sampling = false
	if msg.err == nil {
		prev := m.procs
		m.procs, m.procGen = groupProcs(msg.rows), dataGen.Add(1)
		m = m.keepProcessSelection(prev)
		m.clampSelections()
	}
	return m, nil
}

// handleEvents logs the batch and asks for one snapshot refresh; a burst of
// events while a refresh is in flight coalesces into one more refresh.
func (m dashModel) handleEvents(msg eventsMsg) (dashModel, tea.Cmd) {
	m.dropped = msg.dropped
	if msg.gen != m.gen {
		return m, nil
	}
	m = m.addLive(msg.events).keepEventSelection()
	m.snap(paneEvents)
	if m.study == nil {
		return m, nil
	}
	if m.refreshing {
		m.dirty = true
		return m, nil
	}
	m.refreshing = true
	return m, m.refreshCmd()
}

// handleTick advances the clock, samples processes (about twice a second)
// and refreshes the snapshot every fourth tick.
func (m dashModel) handleTick(msg tickMsg) (dashModel, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	m.now, m.ticks = msg.now, m.ticks+1
	if m.flashTicks > 0 {
		if m.flashTicks--; m.flashTicks == 0 {
			m.flash = ""
		}
	}
	cmds := []tea.Cmd{m.tickCmd()}
	if m.study != nil && !m.sampling {
		m.sampling = true
		cmds = append(cmds, m.sampleCmd())
	}
	if m.study != nil && !m.refreshing && m.ticks%4 == 0 {
		m.refreshing = true
		cmds = append(cmds, m.refreshCmd())
	}
	return m, tea.Batch(cmds...)
}

func (m dashModel) handleControlDone(msg controlDoneMsg) (dashModel, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	m.controlling = false
	if msg.err != nil {
		m = m.say("could not " + string(msg.command) + ": " + msg.err.Error())
	} else {
		m = m.say(string(msg.command) + " done")
		m.leaveErr = ""
	}
	if m.refreshing {
		m.dirty = true
		return m, nil
	}
	m.refreshing = true
	return m, m.refreshCmd()
}

// say shows a short message in the status bar for a few seconds.
func (m dashModel) say(s string) dashModel {
	m.flash, m.flashTicks = s, 8
	return m
}

// handleKey routes a key to the open overlay or to the dashboard itself.
func (m dashModel) handleKey(msg tea.KeyMsg) (dashModel, tea.Cmd) {
	k := m.c.Keys
	switch {
	case m.confirm != "":
		return m.handleConfirmKey(msg)
	case m.help:
		m.help = false
		return m, nil
	case m.log.open:
		return m.handleLogKey(msg)
	case m.steer.open:
		return m.handleSteerKey(msg)
	case m.filters[m.focus].editing:
		return m.handleFilterKey(msg)
	case m.wantsLog(msg):
		return m.openLog(msg)
	case m.detail:
		return m.handleDetailKey(msg)
	case m.wantsFilter(msg):
		return m.handleOpenFilter()
	case m.clearsFilter(msg):
		return m.clearFilter(), nil
	case key.Matches(msg, k.Quit, k.ForceQuit):
		return m.handleLeave()
	case key.Matches(msg, k.Help):
		m.help = true
	case key.Matches(msg, k.Tab):
		m.focus = (m.focus + 1) % paneCount
	case key.Matches(msg, k.BackTab):
		m.focus = (m.focus + paneCount - 1) % paneCount
	case key.Matches(msg, k.Up):
		return m.moveAndPage(-1)
	case key.Matches(msg, k.Down):
		return m.moveAndPage(1)
	case key.Matches(msg, k.Enter) && m.focus == paneProcesses:
		return m.jumpToExperiment(), nil
	case key.Matches(msg, k.Enter):
		return m.openDetail()
	case key.Matches(msg, k.Dismiss):
		m.warnDismissed = true
	case key.Matches(msg, k.Warning):
		return m.handleWarningKey()
	case key.Matches(msg, k.Pause), key.Matches(msg, k.Resume), key.Matches(msg, k.Cancel):
		return m.handleControlKey(msg)
	case key.Matches(msg, k.Steer):
		return m.openSteer()
	case key.Matches(msg, k.Continue):
		return m.beginContinue()
	}
	return m, nil
}

func (m dashModel) handleWarningKey() (dashModel, tea.Cmd) {
	if !m.cooperative() {
		return m.say(backendLabel(string(m.state.Snapshot.ExecutionBackend)) + ": no isolation warning applies"), nil
	}
	m.warnDismissed = false
	return m, nil
}

func (m dashModel) handleConfirmKey(msg tea.KeyMsg) (dashModel, tea.Cmd) {
	what := m.confirm
	m.confirm = ""
	if what == "leave" && key.Matches(msg, m.c.Keys.Background) {
		return m.beginHandOver()
	}
	if !key.Matches(msg, m.c.Keys.Yes) {
		if what == "leave" && key.Matches(msg, m.c.Keys.ForceQuit) {
			return m.beginLeave()
		}
		return m.say("nothing changed"), nil
	}
	if what == "leave" {
		return m.beginLeave()
	}
	m.controlling = true
	return m.say("cancelling…"), m.controlCmd(engine.Cancel)
}

func (m dashModel) beginLeave() (dashModel, tea.Cmd) {
	m.controlling = true
	return m.say("pausing the study before leaving…"), m.leaveCmd()
}

// handleLeave leaves at once unless this process supervises a running
// study: then it asks, and pauses the study durably before leaving.
func (m dashModel) handleLeave() (dashModel, tea.Cmd) {
	if m.controlling {
		return m, nil
	}
	// Whenever this process supervises the study — also in the moment
	// after it started, before a refresh shows the study running.
	if m.state.Supervising {
		m.confirm = "leave"
		return m, nil
	}
	gen := m.gen
	return m, msgCmd(leftMsg{gen: gen})
}

// handleControlKey checks that a pause, resume or cancel makes sense now.
func (m dashModel) handleControlKey(msg tea.KeyMsg) (dashModel, tea.Cmd) {
	k, status := m.c.Keys, m.state.Snapshot.Status
	switch {
	case m.c.ReadOnly:
		return m.say("read-only: controls are disabled"), nil
	case m.study == nil || !m.loaded:
		return m.say("the study is still loading"), nil
	case m.controlling:
		return m.say("busy: waiting for the last request"), nil
	case key.Matches(msg, k.Pause):
		if status != engine.StatusRunning {
			return m.say("the study is " + string(status) + "; nothing to pause"), nil
		}
		m.controlling = true
		return m.say("pausing…"), m.controlCmd(engine.Pause)
	case key.Matches(msg, k.Cancel):
		if engine.Terminal(status) {
			return m.say("the study is " + string(status) + "; nothing to cancel"), nil
		}
		m.confirm = "cancel"
		return m, nil
	}
	// A study that is not running may still look owned for a moment (its
	// last supervisor is exiting, or the last refresh is older): the
	// resume itself takes the lock, and says so if it cannot.
	if status == engine.StatusRunning || engine.Terminal(status) {
		return m.say("the study is " + string(status) + "; it cannot be resumed now"), nil
	}
	m.controlling = true
	return m.say("resuming…"), m.controlCmd(resume)
}

// cooperative reports whether the study runs in a cooperative backend.
func (m dashModel) cooperative() bool {
	return engine.IsCooperativeBackend(string(m.state.Snapshot.ExecutionBackend))
}

// warningShown reports whether the isolation sidebar is open.
func (m dashModel) warningShown() bool { return m.loaded && m.cooperative() && !m.warnDismissed }

func (m *dashModel) clampSelections() {
	for p := range paneCount {
		m.snap(p)
	}
}
