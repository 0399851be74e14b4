package tui

import (
	tea "github.com/charmbracelet/bubbletea"
)

// handedOverMsg says whether the hand-over to a background supervisor
// worked: then the dashboard leaves; else it stays and says why.
type handedOverMsg struct {
	gen int
	err error
}

// handOverCmd hands the study to a detached supervisor and waits until it
// has taken the study (liveStudy.handOver), off the Update goroutine.
func (m dashModel) handOverCmd() tea.Cmd {
	s, ctx, gen := m.study, m.ctx, m.gen
	return func() tea.Msg {
		return handedOverMsg{gen: gen, err: s.Control(ctx, background)}
	}
}

// beginHandOver answers "b" in the leave prompt.
func (m dashModel) beginHandOver() (dashModel, tea.Cmd) {
	m.controlling, m.leaveErr = true, ""
	return m.say("handing the study to a background supervisor…"), m.handOverCmd()
}

// handleHandedOver leaves once the background supervisor owns the study;
// on failure it stays, says why, and refreshes (the study is paused then).
func (m dashModel) handleHandedOver(msg handedOverMsg) (dashModel, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	m.controlling = false
	if msg.err == nil {
		gen := m.gen
		return m, msgCmd(leftMsg{gen: gen})
	}
	m.leaveErr = msg.err.Error()
	m = m.say("stayed: the study is paused here (r resumes it)")
	if m.refreshing {
		m.dirty = true
		return m, nil
	}
	m.refreshing = true
	return m, m.refreshCmd()
}

// leaveErrLine is the line under the header that says why the last
// hand-over failed, until the next hand-over or control succeeds.
func (m dashModel) leaveErrLine(w int) string {
	return m.c.Styles.Warn.Render(fit("⚠ could not leave it running: "+m.leaveErr, w))
}
