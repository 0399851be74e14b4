package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// Form fields, in order.
const (
	fHypothesis = iota
	fHypothesisFile
	fInstructions
	fInstructionsFile
	fAgent
	fModel
	fExecutable
	fConnection
	fPolicy
	fWall
	fTurn
	fBackend
	fDir
	fInherit // a continuation's picker (continueform.go); shown first, reached after fDir
	fieldCount
)

var fieldLabels = [fieldCount]string{"Hypothesis", "  or file", "Instructions", "  or file", "Agent backend", "Model",
	"Executable", "Connection file", "Completion", "Wall seconds", "Turn seconds", "Execution", "Campaign folder",
	"Inherit files"}

// backendChoice is one choice of the execution backend selector.
type backendChoice struct {
	name, label string
	preselect   bool // may be the form's initial choice
}

// backendChoices are the execution backend selector's choices: auto, then
// every backend of the engine's table.
var backendChoices = func() []backendChoice {
	out := []backendChoice{{"auto", "Auto", true}}
	for _, b := range engine.ExecutionBackends() {
		out = append(out, backendChoice{b.Name, b.Label, b.Preselect})
	}
	return out
}()

// Form messages.
type (
	probesMsg struct{ probes []engine.BackendProbe }
	// reviewMsg asks the root to show the contract review of the form:
	// the files it names were read (texts), at now.
	reviewMsg struct {
		study  NewStudy
		probes []engine.BackendProbe
		texts  [2]string // the hypothesis and instructions files' text
		now    time.Time
	}
	// formErrMsg says why the form cannot go on to the review.
	formErrMsg struct{ err string }
)

// formModel is the new-study form.
type formModel struct {
	c             *Common
	ctx           context.Context
	inputs        [fieldCount]textinput.Model
	agent, policy int
	backend       int
	probes        []engine.BackendProbe
	focus         int
	err           string
	width, height int
	help          bool
	confirmEsc    bool // esc asked whether to throw away what was typed
	defaults      [fieldCount]string
	cont          *contPicker // a continuation's parent and files (continueform.go); nil otherwise
}

// newForm is a form whose default campaign folder is named after now and
// is none of the taken folders.
func newForm(c *Common, ctx context.Context, now time.Time, taken map[string]bool) formModel {
	m := formModel{c: c, ctx: ctx}
	for i := range m.inputs {
		ti := textinput.New()
		ti.Prompt = ""
		ti.Cursor.SetMode(cursor.CursorStatic)
		m.inputs[i] = ti
	}
	m.inputs[fWall].SetValue("3600")
	m.inputs[fTurn].SetValue("600")
	m.inputs[fDir].SetValue(freshDir(c.Root, now, taken))
	m.inputs[fModel].Placeholder = "the backend's default"
	m.inputs[fExecutable].Placeholder = "the backend's usual binary"
	m.inputs[fConnection].Placeholder = "api: a file with base_url and api_key, mode 0600; claude: a settings file"
	for i, b := range backendChoices {
		if b.name == c.DefaultBackend && b.preselect {
			m.backend = i
		}
	}
	m.inputs[fHypothesis].Focus()
	for i := range m.inputs {
		m.defaults[i] = m.inputs[i].Value()
	}
	return m
}

// freshDir is root/study-<now>, with a -2, -3, … suffix if that is taken.
func freshDir(root string, now time.Time, taken map[string]bool) string {
	base := filepath.Join(root, "study-"+now.UTC().Format("20060102-150405"))
	dir := base
	for i := 2; taken[dir]; i++ {
		dir = fmt.Sprintf("%s-%d", base, i)
	}
	return dir
}

// typed reports whether the operator changed any text of the form.
func (m formModel) typed() bool {
	for i := range m.inputs {
		if m.inputs[i].Value() != m.defaults[i] {
			return true
		}
	}
	return false
}

func (m formModel) probeCmd() tea.Cmd {
	w, ctx := m.c.Work, m.ctx
	return func() tea.Msg { return probesMsg{probes: w.Probe(ctx)} }
}

// Update is the form's dispatcher.
func (m formModel) Update(msg tea.Msg) (formModel, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case probesMsg:
		m.probes = msg.probes
		return m, nil
	case formErrMsg:
		m.err = msg.err
		return m, nil
	case tea.KeyMsg:
		return m.handleKey(msg)
	}
	return m, nil
}

func (m formModel) handleKey(msg tea.KeyMsg) (formModel, tea.Cmd) {
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.ForceQuit):
		return m, msgCmd(quitMsg{})
	case m.help:
		m.help = false
		return m, nil
	case m.confirmEsc:
		return m.handleConfirmEsc(msg)
	case msg.Type == tea.KeyF1, key.Matches(msg, k.Help) && m.isChoice(m.focus):
		m.help = true
		return m, nil
	case key.Matches(msg, k.Back) && m.typed():
		m.confirmEsc = true
		return m, nil
	case key.Matches(msg, k.Back):
		return m, msgCmd(homeMsg{})
	case m.pickerKey(msg):
		return m.handlePickerKey(msg), nil
	case key.Matches(msg, k.Review):
		return m.handleReview()
	case key.Matches(msg, k.Tab), msg.Type == tea.KeyDown:
		return m.moveFocus(1), nil
	case key.Matches(msg, k.BackTab), msg.Type == tea.KeyUp:
		return m.moveFocus(-1), nil
	case msg.Type == tea.KeyEnter:
		if m.focus == fDir {
			return m.handleReview()
		}
		return m.moveFocus(1), nil
	}
	if m.isChoice(m.focus) {
		return m.handleChoiceKey(msg), nil
	}
	var cmd tea.Cmd
	m.inputs[m.focus], cmd = m.inputs[m.focus].Update(msg)
	return m, cmd
}

// handleConfirmEsc leaves on y, and stays (keeping the text) on any other key.
func (m formModel) handleConfirmEsc(msg tea.KeyMsg) (formModel, tea.Cmd) {
	m.confirmEsc = false
	if key.Matches(msg, m.c.Keys.Yes) {
		return m, msgCmd(homeMsg{})
	}
	return m, nil
}

func (m formModel) isChoice(f int) bool {
	return f == fAgent || f == fPolicy || f == fBackend || f == fInherit
}

func (m formModel) handleChoiceKey(msg tea.KeyMsg) formModel {
	step := 0
	switch {
	case key.Matches(msg, m.c.Keys.Right):
		step = 1
	case key.Matches(msg, m.c.Keys.Left):
		step = -1
	default:
		return m
	}
	cycle := func(v, n int) int { return (v + step + n) % n }
	switch m.focus {
	case fAgent:
		m.agent = cycle(m.agent, len(engine.AgentBackends()))
	case fPolicy:
		m.policy = cycle(m.policy, len(engine.Policies))
	case fBackend:
		m.backend = cycle(m.backend, len(backendChoices))
	}
	return m
}

// agentBackend is the chosen agent backend's row of the engine's table.
func (m formModel) agentBackend() engine.AgentBackend { return engine.AgentBackends()[m.agent] }

// need is how the chosen agent backend takes input f (Optional for the
// inputs that do not depend on it).
func (m formModel) need(f int) engine.Need {
	if field, ok := agentFieldOf(f); ok {
		return m.agentBackend().Need(field)
	}
	if f == fInherit && m.cont == nil {
		return engine.Forbidden
	}
	return engine.Optional
}

// moveFocus moves to the next shown field in direction d.
func (m formModel) moveFocus(d int) formModel {
	m.inputs[m.focus].Blur()
	m.focus = (m.focus + d + fieldCount) % fieldCount
	for m.need(m.focus) == engine.Forbidden {
		m.focus = (m.focus + d + fieldCount) % fieldCount
	}
	if !m.isChoice(m.focus) {
		m.inputs[m.focus].Focus()
	}
	return m
}

// handleReview checks the form and moves on to the contract review.
func (m formModel) handleReview() (formModel, tea.Cmd) {
	n, err := m.study()
	if err != nil {
		m.err = err.Error()
		return m, nil
	}
	m.err = ""
	return m, m.prepareCmd(n)
}

// prepareCmd reads the files the form names, so a missing or empty one is
// refused here and the review shows their text, and reads the clock for
// the review's absolute deadline.
func (m formModel) prepareCmd(n NewStudy) tea.Cmd {
	w, ctx, c, probes := m.c.Work, m.ctx, m.c, m.probes
	return func() tea.Msg {
		msg := reviewMsg{study: n, probes: probes, now: c.now()}
		for i, f := range []struct {
			what  string
			field engine.Field
			path  string
		}{{"hypothesis", engine.FieldHypothesisFile, n.HypothesisFile}, {"instructions", engine.FieldInstructionsFile, n.InstructionsFile}} {
			if f.path == "" {
				continue
			}
			text, err := w.ReadText(ctx, f.field, f.path)
			if err != nil {
				return formErrMsg{err: "the " + f.what + " file cannot be used: " + err.Error()}
			}
			msg.texts[i] = text
		}
		return msg
	}
}

// study turns the form into a NewStudy.
func (m formModel) study() (NewStudy, error) {
	v := func(f int) string { return strings.TrimSpace(m.inputs[f].Value()) }
	n := NewStudy{Dir: v(fDir), Hypothesis: v(fHypothesis), HypothesisFile: v(fHypothesisFile),
		Instructions: v(fInstructions), InstructionsFile: v(fInstructionsFile)}
	switch {
	case n.Hypothesis == "" && n.HypothesisFile == "" && m.cont == nil:
		return n, fmt.Errorf("type a hypothesis or give its file")
	case n.Instructions == "" && n.InstructionsFile == "":
		return n, fmt.Errorf("type the instructions or give their file")
	case n.Dir == "":
		return n, fmt.Errorf("name a campaign folder")
	}
	wall, err1 := strconv.ParseInt(v(fWall), 10, 64)
	turn, err2 := strconv.ParseInt(v(fTurn), 10, 64)
	if err1 != nil || err2 != nil || wall <= 0 || turn <= 0 || turn > wall {
		return n, fmt.Errorf("need whole seconds with 0 < turn <= wall")
	}
	n.Request = engine.Request{Mode: "minimal", AgentBackend: m.agentBackend().Name, ExecutionBackend: backendChoices[m.backend].name,
		CompletionPolicy: engine.Policies[m.policy], WallSeconds: wall, TurnSeconds: turn}
	m.applyContinuation(&n.Request)
	return n, m.agentFields(&n.Request, v)
}

// agentFields fills the request fields the chosen agent backend takes from
// their inputs; the inputs of the fields it does not take stay out.
func (m formModel) agentFields(r *engine.Request, v func(int) string) error {
	for _, f := range formAgentFields {
		switch m.need(f.input) {
		case engine.Forbidden:
			continue
		case engine.Required:
			if v(f.input) == "" {
				return fmt.Errorf("%s is required for the %s backend", fieldLabels[f.input], r.AgentBackend)
			}
		}
		*r.Field(f.field) = v(f.input)
	}
	return nil
}

// View renders the form.
func (m formModel) View() string {
	w, h := max(m.width, 20), max(m.height, 6)
	cont, at := m.contLines(w)
	lines := append([]string{m.c.Styles.Title.Render(m.title()), ""}, cont...)
	focusLine := 2 + at
	for f := range fieldCount {
		if m.need(f) == engine.Forbidden || f == fInherit {
			continue
		}
		if f == m.focus {
			focusLine = len(lines)
		}
		if f == fBackend {
			lines = append(lines, m.backendLines(w)...)
			continue
		}
		lines = append(lines, m.fieldLine(f, w))
	}
	tail := []string{""}
	for _, l := range wrap(m.err, w) {
		tail = append(tail, m.c.Styles.Bad.Render(l))
	}
	lines = append(scrollTo(lines, focusLine, h-1-len(tail)), tail...)
	out := block(lines, w, h-1)
	if m.help {
		out = overlay(out, helpBox("Keys: new study", m.hints()), w)
	}
	bar := footerText(m.hints(), w)
	if m.confirmEsc {
		bar = "Throw away what you typed? y yes · n no"
	}
	out = append(out, m.c.Styles.Bar.Render(fit(bar, w)))
	return strings.Join(out, "\n")
}

// hints are the form's keys that can act on the focused field.
func (m formModel) hints() []hint {
	k := m.c.Keys
	if m.focus == fInherit {
		return m.pickerHints()
	}
	hs := []hint{{"tab/↑↓", "field"}}
	if m.isChoice(m.focus) {
		hs = append(hs, hint{"←→", "choose"})
	}
	help := hint{"f1", "help"}
	if m.isChoice(m.focus) {
		help = hint{"?/f1", "help"}
	}
	return append(hs, hintOf(k.Review), hint{"ctrl+c", "quit"}, help, hint{"esc", "back"})
}

func (m formModel) marker(f int) string {
	if m.focus == f {
		return "▶ "
	}
	return "  "
}

func (m formModel) fieldLine(f, w int) string {
	var val string
	switch f {
	case fAgent:
		val = "‹ " + m.agentBackend().Name + " ›"
	case fPolicy:
		val = "‹ " + engine.Policies[m.policy] + " ›"
	default:
		in := m.inputs[f]
		in.Width = max(10, w-19)
		if m.need(f) == engine.Required {
			in.Placeholder = "required"
		}
		val = in.View()
	}
	label := fmt.Sprintf("%s%-15s ", m.marker(f), fieldLabels[f])
	if m.focus == f {
		label = m.c.Styles.Focus.Render(label)
	}
	return label + val
}

// backendLines is the execution backend selector with each live probe.
func (m formModel) backendLines(w int) []string {
	label := fmt.Sprintf("%s%-15s ", m.marker(fBackend), fieldLabels[fBackend])
	if m.focus == fBackend {
		label = m.c.Styles.Focus.Render(label)
	}
	out := []string{label + m.c.Styles.Dim.Render("←→ choose")}
	for i, b := range backendChoices {
		dot := "( )"
		if i == m.backend {
			dot = "(•)"
		}
		text, ok := m.probeText(b.name)
		if ok {
			out = append(out, fit(fmt.Sprintf("    %s %s — %s", dot, b.label, text), w))
			continue
		}
		out = append(out, fit(fmt.Sprintf("    %s %s", dot, b.label), w), m.c.Styles.Dim.Render(fit("        "+text, w)))
	}
	return out
}

// probeText is "available" (with auto's pick), or the probe's reason and false.
func (m formModel) probeText(name string) (string, bool) {
	for _, p := range m.probes {
		if p.Backend != name {
			continue
		}
		switch {
		case p.Available && name == "auto":
			return "available: selects " + backendLabel(p.Selected), true
		case p.Available:
			return "available", true
		}
		return "unavailable: " + p.Reason, false
	}
	return "probing…", true
}
