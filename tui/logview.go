package tui

import (
	"context"
	"encoding/json"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// logPoll is how often an open log viewer reads what was appended.
const logPoll = 300 * time.Millisecond

// logMsg is a message of the log viewer. Each carries the dashboard's
// generation and the viewer's own (seq), so a closed viewer's ticks and
// reads are dropped.
type logMsg interface{ logSeq() (gen, seq int) }

type (
	logTickMsg struct{ gen, seq int }
	logReadMsg struct {
		gen, seq int
		read     engine.LogRead
		err      error
	}
)

func (m logTickMsg) logSeq() (int, int) { return m.gen, m.seq }
func (m logReadMsg) logSeq() (int, int) { return m.gen, m.seq }

// logKeyMap holds the viewer's own keys; it shares up, down and back with
// the dashboard.
type logKeyMap struct {
	Open, PageUp, PageDown, Top, Bottom, Follow, Stream key.Binding
}

var logKeys = logKeyMap{
	Open:     key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "logs")),
	PageUp:   key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("PgUp", "page up")),
	PageDown: key.NewBinding(key.WithKeys("pgdown", " "), key.WithHelp("PgDn", "page down")),
	Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top")),
	Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "end")),
	Follow:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "follow")),
	Stream:   key.NewBinding(key.WithKeys("tab", "s"), key.WithHelp("tab", "stream")),
}

// logModel is the log viewer: an experiment's stdout and stderr, or an
// agent turn's prompt and output, read from where they are now and
// followed as they grow.
type logModel struct {
	open     bool
	gen, seq int
	study    Study
	ctx      context.Context
	poll     time.Duration // 0 in tests: no timer runs
	target   engine.LogTarget
	place    engine.LogPlace
	streams  []logStream
	tab      int // a stream, or len(streams): all of them, labelled
	follow   bool
	top      int // the first line shown while not following
	loaded   bool
	reading  bool
	err      string
}

func newLogModel(ctx context.Context, s Study, gen, seq int, poll time.Duration, t engine.LogTarget) logModel {
	m := logModel{open: true, gen: gen, seq: seq, study: s, ctx: ctx, poll: poll, target: t, follow: true}
	for _, name := range t.Streams() {
		m.streams = append(m.streams, logStream{name: name, transcript: t.Experiment == "" && name == "stdout"})
	}
	if t.Experiment == "" {
		m.tab = len(m.streams) // a turn reads as one transcript
	}
	return m
}

// readCmd reads every stream beyond its cursor.
func (m logModel) readCmd() tea.Cmd {
	s, ctx, gen, seq, t := m.study, m.ctx, m.gen, m.seq, m.target
	curs := make([]engine.LogCursor, len(m.streams))
	for i, st := range m.streams {
		curs[i] = st.cur
	}
	return func() tea.Msg {
		r, err := s.Logs(ctx, t, curs)
		return logReadMsg{gen: gen, seq: seq, read: r, err: err}
	}
}

func (m logModel) tickCmd() tea.Cmd {
	if m.poll <= 0 {
		return nil
	}
	gen, seq := m.gen, m.seq
	return tea.Tick(m.poll, func(time.Time) tea.Msg { return logTickMsg{gen: gen, seq: seq} })
}

// Update is the viewer's dispatcher; w and h are the terminal's size.
func (m logModel) Update(msg tea.Msg, w, h int) (logModel, tea.Cmd) {
	switch msg := msg.(type) {
	case logTickMsg:
		if m.reading {
			return m, nil
		}
		m.reading = true
		return m, m.readCmd()
	case logReadMsg:
		return m.handleRead(msg, w, h), m.tickCmd()
	case tea.KeyMsg:
		return m.handleKey(msg, w, h)
	}
	return m, nil
}

func (m logModel) handleRead(msg logReadMsg, w, h int) logModel {
	m.reading = false
	if msg.err != nil {
		m.err = msg.err.Error()
		return m
	}
	m.err, m.loaded, m.place = "", true, msg.read.Place
	m.streams = append([]logStream(nil), m.streams...)
	for i := range m.streams {
		if i >= len(msg.read.Chunks) {
			break
		}
		start := m.segmentStart(i)
		if dropped := m.streams[i].apply(msg.read.Chunks[i]); dropped > 0 && m.shows(i) && m.top > start {
			m.top = max(start, m.top-dropped)
		}
	}
	m.top = min(m.top, m.bottomTop(w, h))
	return m
}

func (m logModel) handleKey(msg tea.KeyMsg, w, h int) (logModel, tea.Cmd) {
	k, page := DefaultKeys(), max(1, bodyHeight(h)-1)
	switch {
	case key.Matches(msg, k.Back, k.Quit):
		m.open = false
	case key.Matches(msg, logKeys.Follow):
		m.top, m.follow = m.bottomTop(w, h), !m.follow
	case key.Matches(msg, logKeys.Stream):
		m.tab, m.follow = (m.tab+1)%(len(m.streams)+1), true
	case key.Matches(msg, logKeys.Bottom):
		m.follow = true
	case key.Matches(msg, logKeys.Top):
		m.top, m.follow = 0, false
	case key.Matches(msg, k.Up):
		m = m.scroll(-1, w, h)
	case key.Matches(msg, k.Down):
		m = m.scroll(1, w, h)
	case key.Matches(msg, logKeys.PageUp):
		m = m.scroll(-page, w, h)
	case key.Matches(msg, logKeys.PageDown):
		m = m.scroll(page, w, h)
	}
	return m, nil
}

// scroll moves by d lines, never past the end; moving stops following.
func (m logModel) scroll(d, w, h int) logModel {
	top := m.top
	if m.follow {
		top = m.bottomTop(w, h)
	}
	m.top, m.follow = max(0, min(top+d, m.bottomTop(w, h))), false
	return m
}

// Glue with the dashboard.

// logTarget is what l (or enter where it opens the viewer) shows for the
// focused row: the selected experiment, or the experiment or turn of the
// selected Activity event.
func (m dashModel) logTarget(msg tea.KeyMsg) (engine.LogTarget, bool) {
	isL, isEnter := key.Matches(msg, logKeys.Open), key.Matches(msg, m.c.Keys.Enter)
	if m.filters[m.focus].on() && m.listLen(m.focus) == 0 { // the filter hides every row
		return engine.LogTarget{}, false
	}
	switch {
	case m.focus == paneExperiments && (isL || isEnter && !m.detail):
		exps := m.experimentOrder()
		i := m.sel[paneExperiments]
		if i >= len(exps) || isEnter && exps[i].Status != engine.ExpRunning {
			return engine.LogTarget{}, false
		}
		return engine.LogTarget{Experiment: exps[i].ID}, true
	case m.focus == paneEvents && !m.detail && (isL || isEnter):
		i := len(m.events) - 1 - m.sel[paneEvents] // the pane lists the newest first
		if i < 0 || i >= len(m.events) {
			return engine.LogTarget{}, false
		}
		return eventLogTarget(m.events[i])
	}
	return engine.LogTarget{}, false
}

// eventLogTarget is the turn a turn_started event begins, or the
// experiment an event is about.
func eventLogTarget(ev engine.Event) (engine.LogTarget, bool) {
	var p struct {
		Turn       int    `json:"turn"`
		Role       string `json:"role"`
		Experiment string `json:"experiment"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil {
		return engine.LogTarget{}, false
	}
	switch {
	case ev.Type == engine.EvTurnStarted && p.Turn > 0:
		return engine.LogTarget{Turn: p.Turn}, true
	case p.Experiment != "":
		return engine.LogTarget{Experiment: p.Experiment}, true
	}
	return engine.LogTarget{}, false
}

// wantsLog says whether msg opens the log viewer.
func (m dashModel) wantsLog(msg tea.KeyMsg) bool {
	_, ok := m.logTarget(msg)
	return ok && m.study != nil
}

// openLog opens the viewer on the focused row's logs.
func (m dashModel) openLog(msg tea.KeyMsg) (dashModel, tea.Cmd) {
	t, _ := m.logTarget(msg)
	poll := time.Duration(0)
	if m.c.Tick > 0 {
		poll = logPoll
	}
	m.log = newLogModel(m.ctx, m.study, m.gen, m.log.seq+1, poll, t)
	m.log.reading = true
	return m, m.log.readCmd()
}

// handleLogMsg passes the viewer its ticks and reads; those of a closed or
// replaced viewer, or of another dashboard, are dropped.
func (m dashModel) handleLogMsg(msg logMsg) (dashModel, tea.Cmd) {
	gen, seq := msg.logSeq()
	if !m.log.open || gen != m.gen || seq != m.log.seq {
		return m, nil
	}
	var cmd tea.Cmd
	m.log, cmd = m.log.Update(msg, m.width, m.height)
	return m, cmd
}

func (m dashModel) handleLogKey(msg tea.KeyMsg) (dashModel, tea.Cmd) {
	var cmd tea.Cmd
	m.log, cmd = m.log.Update(msg, m.width, m.height)
	return m, cmd
}

// Logs reads the target's logs from where they are now, bounded.
func (s *liveStudy) Logs(_ context.Context, t engine.LogTarget, curs []engine.LogCursor) (engine.LogRead, error) {
	return engine.ReadLogs(s.c.Dir, t, curs, engine.LogWindow)
}
