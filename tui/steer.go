package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// steerRows is how many messages the steering overlay lists (the newest).
const steerRows = 8

// steerModel is the dashboard's steering overlay (`s`): the study's
// messages of operator guidance with their delivery, and a one-line input
// whose enter sends through the engine's steering call (Study.Steer).
type steerModel struct {
	open    bool
	input   textinput.Model
	sending bool
	err     string // the engine's refusal of the last message
	note    string // what the last send did
}

// steerDoneMsg reports a message sent from the overlay.
type steerDoneMsg struct {
	gen int
	res engine.SteerResult
	err error
}

func newSteerInput() textinput.Model {
	ti := textinput.New()
	ti.Prompt = "› "
	ti.Placeholder = "advice for the agent's next turn"
	ti.CharLimit = engine.MaxSteeringChars
	ti.Cursor.SetMode(cursor.CursorStatic)
	ti.Focus()
	return ti
}

// openSteer is `s` on the dashboard: it opens the overlay once the study
// has loaded (in read-only or once the study has ended it lists the
// messages but takes none, and with none to list it only says so).
func (m dashModel) openSteer() (dashModel, tea.Cmd) {
	if m.study == nil || !m.loaded {
		return m.say("the study is still loading"), nil
	}
	if m.steerReadOnly() && len(m.state.Snapshot.Steering) == 0 {
		return m.say(m.steerRefusal() + "; there is no guidance to read"), nil
	}
	m.steer = steerModel{open: true, input: newSteerInput()}
	return m, nil
}

func (m dashModel) steerCmd(text string) tea.Cmd {
	s, ctx, gen := m.study, m.ctx, m.gen
	return func() tea.Msg {
		res, err := s.Steer(ctx, text)
		return steerDoneMsg{gen: gen, res: res, err: err}
	}
}

// handleSteerKey edits the message; enter sends it, esc closes.
func (m dashModel) handleSteerKey(msg tea.KeyMsg) (dashModel, tea.Cmd) {
	switch msg.Type {
	case tea.KeyEsc:
		m.steer.open = false
		return m, nil
	case tea.KeyCtrlC:
		m.steer.open = false
		return m.handleLeave()
	case tea.KeyEnter:
		return m.sendSteer()
	}
	if m.steerReadOnly() {
		return m, nil
	}
	var cmd tea.Cmd
	m.steer.input, cmd = m.steer.input.Update(msg)
	return m, cmd
}

// sendSteer sends the typed message, unless it is empty, one is on its
// way, or the UI is read-only.
func (m dashModel) sendSteer() (dashModel, tea.Cmd) {
	text := strings.TrimSpace(m.steer.input.Value())
	switch {
	case m.steerReadOnly():
		m.steer.err = m.steerRefusal()
		return m, nil
	case m.steer.sending:
		return m, nil
	case text == "":
		m.steer.err = "type the guidance first"
		return m, nil
	}
	m.steer.sending, m.steer.err, m.steer.note = true, "", ""
	return m, m.steerCmd(text)
}

// handleSteerDone shows the engine's answer and re-reads the study, so the
// list shows the new message.
func (m dashModel) handleSteerDone(msg steerDoneMsg) (dashModel, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	m.steer.sending = false
	if msg.err != nil {
		m.steer.err = engineMessage(msg.err)
		return m, nil
	}
	m.steer.input.SetValue("")
	m.steer.note = "queued " + msg.res.ID + ": the agent reads it at its next turn"
	if m.refreshing {
		m.dirty = true
		return m, nil
	}
	m.refreshing = true
	return m, m.refreshCmd()
}

// engineMessage is an engine error without the sentinel the CLI turns into
// an exit code.
func engineMessage(err error) string {
	return strings.TrimSuffix(err.Error(), ": "+engine.ErrInvalid.Error())
}

// steerHints are the footer while the overlay is open.
func (m dashModel) steerHints() []hint {
	if m.steerReadOnly() {
		return []hint{{"esc", "close"}}
	}
	return []hint{{"type", "guidance"}, {"enter", "send"}, {"esc", "close"}}
}

// steerLines is the overlay's text for a body w cells wide.
func (m dashModel) steerLines(w int) []string {
	iw := max(20, min(w-8, 96))
	lines := []string{"Operator guidance — advisory: it changes no contract, verdict or deadline", ""}
	msgs := m.state.Snapshot.Steering
	if len(msgs) == 0 {
		lines = append(lines, "  no guidance yet")
	}
	if n := len(msgs); n > steerRows {
		lines = append(lines, fmt.Sprintf("  … %d older not shown", n-steerRows))
		msgs = msgs[n-steerRows:]
	}
	for _, s := range msgs {
		lines = append(lines, fit(fmt.Sprintf("  %-22s %s", delivery(s), oneLine(s.Text)), iw))
	}
	lines = append(lines, "")
	if m.steerReadOnly() {
		lines = append(lines, m.steerRefusal())
	} else {
		in := m.steer.input
		in.Width = iw - 4
		lines = append(lines, in.View())
	}
	switch {
	case m.steer.sending:
		lines = append(lines, "sending…")
	case m.steer.err != "":
		lines = append(lines, wrap(m.steer.err, iw)...)
	case m.steer.note != "":
		lines = append(lines, fit(m.steer.note, iw))
	}
	return lines
}

// delivery is "queued" or "delivered at 15:04:05".
func delivery(s engine.Steering) string {
	if s.DeliveredAt == nil {
		return "queued"
	}
	if t, err := time.Parse(time.RFC3339Nano, *s.DeliveredAt); err == nil {
		return "delivered at " + t.UTC().Format("15:04:05")
	}
	return "delivered"
}

// steerReadOnly is whether the guidance overlay only lists messages: in
// read-only, and once the study has ended (the engine refuses steering
// then; continuing the study with C is how to go on).
func (m dashModel) steerReadOnly() bool {
	return m.c.ReadOnly || engine.Terminal(m.state.Snapshot.Status)
}

// steerRefusal says why guidance cannot be sent from the overlay.
func (m dashModel) steerRefusal() string {
	if m.c.ReadOnly {
		return "read-only: guidance cannot be sent from this view"
	}
	return "the study has ended: guidance cannot be sent"
}

// steerHint is the footer's hint for `s`, when it can act: guidance to
// send, or (read-only, or the study ended) messages to read.
func (m dashModel) steerHint() (hint, bool) {
	h := hintOf(m.c.Keys.Steer)
	switch {
	case m.study == nil || !m.loaded:
		return h, false
	case !m.steerReadOnly():
		return h, true
	}
	h.desc += " (read)"
	return h, len(m.state.Snapshot.Steering) > 0
}
