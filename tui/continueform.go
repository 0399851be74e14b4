package tui

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// pickerRows and refusedRows bound the inherit picker's lines in the form.
const pickerRows, refusedRows = 6, 3

// continueMsg carries what a continuation of the dashboard's study starts
// from (Study.ContinuationDraft), read in a Cmd after `C`.
type continueMsg struct {
	gen   int
	draft engine.ContinuationDraft
	err   error
	now   time.Time
}

// contPicker is the new-study form's continuation part: the parent and a
// checklist of its research/ files that pass the selection rules, and the
// files refused with the reason.
type contPicker struct {
	parent    string
	files     []engine.InheritCandidate // allowed, in path order
	refused   []engine.InheritCandidate
	picked    []bool
	sel       int
	truncated bool
}

// canContinue reports whether `C` can act: a finished study, or one whose
// deadline has passed and that no process here supervises, not read-only.
func (m dashModel) canContinue() bool {
	s := m.state.Snapshot
	if !m.canControl() || m.state.Supervising || s.Status == engine.StatusRunning {
		return false
	}
	return engine.Terminal(s.Status) || (!s.Deadline.IsZero() && !m.now.Before(s.Deadline))
}

// beginContinue is `C`: read the draft of a continuation in a Cmd.
func (m dashModel) beginContinue() (dashModel, tea.Cmd) {
	switch {
	case m.c.ReadOnly:
		return m.say("read-only: a continuation cannot be started from this view"), nil
	case !m.canContinue():
		return m.say("only a finished or out-of-budget study can be continued; this one is " + string(m.state.Snapshot.Status)), nil
	}
	s, ctx, gen, c := m.study, m.ctx, m.gen, m.c
	return m.say("reading the study for its continuation…"), func() tea.Msg {
		d, err := s.ContinuationDraft(ctx)
		return continueMsg{gen: gen, draft: d, err: err, now: c.now()}
	}
}

// handleContinue opens the new-study form as a continuation of the
// dashboard's study.
func (m Model) handleContinue(msg continueMsg) (tea.Model, tea.Cmd) {
	if msg.gen != m.dash.gen || m.screen != screenDash {
		return m, nil
	}
	if msg.err != nil {
		m.dash = m.dash.say("cannot continue: " + msg.err.Error())
		return m, nil
	}
	m.screen, m.form = screenForm, newForm(m.c, m.ctx, msg.now, m.home.dirs()).continuing(msg.draft)
	m.form, _ = m.form.Update(tea.WindowSizeMsg{Width: m.width, Height: m.height})
	return m, m.form.probeCmd()
}

// continuing prefills the form from a continuation draft: the parent's
// agent backend, model, executable, connection file, execution backend,
// completion policy and turn seconds (a new budget), and the picker.
func (m formModel) continuing(d engine.ContinuationDraft) formModel {
	r := d.Request
	p := &contPicker{parent: d.Parent, truncated: d.Truncated}
	for _, f := range d.Files {
		if f.Refused == "" {
			p.files = append(p.files, f)
		} else {
			p.refused = append(p.refused, f)
		}
	}
	p.picked = make([]bool, len(p.files))
	m.cont = p
	for i, b := range engine.AgentBackends() {
		if b.Name == r.AgentBackend {
			m.agent = i
		}
	}
	if i := slices.Index(engine.Policies, r.CompletionPolicy); i >= 0 {
		m.policy = i
	}
	for i, b := range backendChoices {
		if b.name == r.ExecutionBackend {
			m.backend = i
		}
	}
	m.inputs[fModel].SetValue(r.Model)
	m.inputs[fExecutable].SetValue(r.Executable)
	m.inputs[fConnection].SetValue(r.ProviderConfig)
	if r.TurnSeconds > 0 {
		m.inputs[fTurn].SetValue(strconv.FormatInt(r.TurnSeconds, 10))
	}
	m.inputs[fHypothesis].Placeholder = "the parent's, unless you type a revised one"
	for i := range m.inputs {
		m.defaults[i] = m.inputs[i].Value()
	}
	m.inputs[m.focus].Blur()
	m.focus = fInherit
	return m
}

// pickerKey reports whether the picker takes msg: every key but those
// that leave the field or the form.
func (m formModel) pickerKey(msg tea.KeyMsg) bool {
	k := m.c.Keys
	return m.focus == fInherit && m.cont != nil &&
		!key.Matches(msg, k.Tab, k.BackTab, k.Review, k.Back) && msg.Type != tea.KeyEnter
}

// handlePickerKey moves in the checklist (past its ends to the next
// field) and toggles the selected file with space.
func (m formModel) handlePickerKey(msg tea.KeyMsg) formModel {
	p := *m.cont
	p.picked = slices.Clone(p.picked)
	switch {
	case msg.Type == tea.KeyUp && p.sel > 0:
		p.sel--
	case msg.Type == tea.KeyUp:
		return m.moveFocus(-1)
	case msg.Type == tea.KeyDown && p.sel < len(p.files)-1:
		p.sel++
	case msg.Type == tea.KeyDown:
		return m.moveFocus(1)
	case msg.Type == tea.KeySpace || msg.String() == " " || msg.String() == "x":
		if len(p.files) > 0 {
			p.picked[p.sel] = !p.picked[p.sel]
		}
	}
	m.cont = &p
	return m
}

// pickerHints are the form's keys while the picker has the focus.
func (m formModel) pickerHints() []hint {
	return []hint{{"tab/↑↓", "field"}, {"space", "inherit file"}, hintOf(m.c.Keys.Review), {"ctrl+c", "quit"},
		{"f1", "help"}, {"esc", "back"}}
}

// applyContinuation sets the request's parent and chosen files.
func (m formModel) applyContinuation(r *engine.Request) {
	if m.cont == nil {
		return
	}
	r.ContinueFrom, r.InheritFiles = m.cont.parent, nil
	for i, f := range m.cont.files {
		if m.cont.picked[i] {
			r.InheritFiles = append(r.InheritFiles, f.Path)
		}
	}
}

// contLines are the form's continuation lines: the parent and the
// picker, and the index of the picker's selected line among them.
func (m formModel) contLines(w int) ([]string, int) {
	p := m.cont
	if p == nil {
		return nil, 0
	}
	st := m.c.Styles
	lines := []string{fit(fmt.Sprintf("  %-15s %s", "Continue from", p.parent), w),
		st.Dim.Render(fit("                  its history is read; nothing accepted in it carries over", w))}
	n, bytes := 0, int64(0)
	for i, f := range p.files {
		if p.picked[i] {
			n, bytes = n+1, bytes+f.Bytes
		}
	}
	label := fmt.Sprintf("%s%-15s ", m.marker(fInherit), fieldLabels[fInherit])
	if m.focus == fInherit {
		label = st.Focus.Render(label)
	}
	lines = append(lines, label+fmt.Sprintf("%d of %d chosen · %s", n, len(p.files), human(bytes)))
	at := len(lines) - 1
	if len(p.files) == 0 {
		lines = append(lines, st.Dim.Render("    no file of its research/ can be inherited"))
	}
	lo := min(max(0, p.sel-pickerRows/2), max(0, len(p.files)-pickerRows))
	for i := lo; i < min(len(p.files), lo+pickerRows); i++ {
		mark, box := "  ", "[ ]"
		if m.focus == fInherit && i == p.sel {
			mark, at = "› ", len(lines)
		}
		if p.picked[i] {
			box = "[x]"
		}
		lines = append(lines, fit(fmt.Sprintf("  %s%s %s  %s", mark, box, p.files[i].Path, human(p.files[i].Bytes)), w))
	}
	if more := len(p.files) - pickerRows; more > 0 {
		lines = append(lines, st.Dim.Render(fit(fmt.Sprintf("    %d–%d of %d", lo+1, min(len(p.files), lo+pickerRows), len(p.files)), w)))
	}
	return append(lines, m.refusedLines(w)...), at
}

// scrollTo keeps at most h of the lines, a window that shows line at
// (the focused field) when they do not all fit.
func scrollTo(lines []string, at, h int) []string {
	if len(lines) <= h || h <= 0 {
		return lines
	}
	start := min(max(0, at-h/2), len(lines)-h)
	return lines[start : start+h]
}

// refusedLines name the files the selection rules refuse, with the reason.
func (m formModel) refusedLines(w int) []string {
	p := m.cont
	var out []string
	for i, f := range p.refused {
		if i == refusedRows {
			out = append(out, fmt.Sprintf("    … %d more refused", len(p.refused)-refusedRows))
			break
		}
		out = append(out, fmt.Sprintf("    refused %s: %s", f.Path, f.Refused))
	}
	if p.truncated {
		out = append(out, fmt.Sprintf("    (only the first %d entries of research/ are listed)", engine.MaxInheritCandidates))
	}
	for i, l := range out {
		out[i] = m.c.Styles.Dim.Render(fit(l, w))
	}
	return out
}

// continuationRows are the review's lines of a continuation.
func continuationRows(n NewStudy) [][2]string {
	r := n.Request
	if r.ContinueFrom == "" {
		return nil
	}
	files := "none"
	if len(r.InheritFiles) > 0 {
		files = fmt.Sprintf("%d: %v", len(r.InheritFiles), r.InheritFiles)
	}
	return [][2]string{{"Continues", r.ContinueFrom + " (its root starts open here)"}, {"Inherits", files}}
}

// title is the form's heading.
func (m formModel) title() string {
	if m.cont != nil {
		return "New study · continuation phase"
	}
	return "New study"
}

// hypothesisText is the review's hypothesis: a continuation's parent's
// when none was typed.
func hypothesisText(n NewStudy, shown string) string {
	if shown == "" && n.Request.ContinueFrom != "" {
		return "the parent's (not revised)"
	}
	return shown
}
