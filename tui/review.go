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

// createdMsg reports the new study's folder, or why it was not created.
type createdMsg struct {
	dir string
	err error
}

// backToFormMsg asks the root to show the form again.
type backToFormMsg struct{}

// reviewModel shows the contract a new study will freeze, before launch.
type reviewModel struct {
	c             *Common
	ctx           context.Context
	study         NewStudy
	probes        []engine.BackendProbe
	texts         [2]string // the hypothesis and instructions files' text
	now           time.Time // when the review opened: the deadline is about now + wall
	help          bool
	busy          bool
	err           string
	width, height int
}

func newReview(c *Common, ctx context.Context, msg reviewMsg) reviewModel {
	return reviewModel{c: c, ctx: ctx, study: msg.study, probes: msg.probes, texts: msg.texts, now: msg.now}
}

func (m reviewModel) createCmd() tea.Cmd {
	w, ctx, n := m.c.Work, m.ctx, m.study
	return func() tea.Msg {
		dir, err := w.Create(ctx, n)
		return createdMsg{dir: dir, err: err}
	}
}

// Update is the review screen's dispatcher.
func (m reviewModel) Update(msg tea.Msg) (reviewModel, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case createdMsg:
		m.busy = false
		if msg.err != nil {
			m.err = errText(msg.err)
			return m, nil
		}
		return m, msgCmd(openStudyMsg{dir: msg.dir, launch: true})
	case tea.KeyMsg:
		return m.handleKey(msg)
	}
	return m, nil
}

func (m reviewModel) handleKey(msg tea.KeyMsg) (reviewModel, tea.Cmd) {
	k := m.c.Keys
	switch {
	case m.busy:
		return m, nil
	case key.Matches(msg, k.ForceQuit):
		return m, msgCmd(quitMsg{})
	case m.help:
		m.help = false
	case key.Matches(msg, k.Help):
		m.help = true
	case key.Matches(msg, k.Back):
		return m, msgCmd(backToFormMsg{})
	case msg.Type == tea.KeyEnter:
		if p, ok := m.probe(); ok && !p.Available {
			m.err = "cannot launch: " + backendLabel(p.Backend) + " is unavailable: " + p.Reason
			return m, nil
		}
		m.busy, m.err = true, ""
		return m, m.createCmd()
	}
	return m, nil
}

func (m reviewModel) probe() (engine.BackendProbe, bool) {
	for _, p := range m.probes {
		if p.Backend == m.study.Request.ExecutionBackend {
			return p, true
		}
	}
	return engine.BackendProbe{}, false
}

// resolved is the execution backend the study will record (never auto).
func (m reviewModel) resolved() string {
	p, ok := m.probe()
	switch {
	case !ok:
		return m.study.Request.ExecutionBackend + " (not probed yet)"
	case !p.Available:
		return p.Backend + " — UNAVAILABLE: " + p.Reason
	case p.Backend == "auto":
		return backendLabel(p.Selected) + " (auto: " + p.Selected + ")"
	}
	return backendLabel(p.Backend)
}

// View renders the contract.
func (m reviewModel) View() string {
	w, h := max(m.width, 20), max(m.height, 6)
	r := m.study.Request
	text := func(typed, file, read string) string {
		if file != "" {
			return oneLine(read) + " (file " + file + ")"
		}
		return oneLine(typed)
	}
	model := r.Model
	if model == "" {
		model = "(the backend's default)"
	}
	lines := []string{m.c.Styles.Title.Render("Review the frozen contract"), ""}
	kv := func(k, v string) { lines = append(lines, kvLines(k, v, w, reviewTextLines[k])...) }
	kv("Campaign folder", m.study.Dir)
	for _, row := range continuationRows(m.study) {
		kv(row[0], row[1])
	}
	kv("Hypothesis", hypothesisText(m.study, text(m.study.Hypothesis, m.study.HypothesisFile, m.texts[0])))
	kv("Instructions", text(m.study.Instructions, m.study.InstructionsFile, m.texts[1]))
	kv("Mode", r.Mode)
	kv("Agent backend", r.AgentBackend)
	kv("Model / judge", model+" / same")
	if r.Executable != "" {
		kv("Executable", r.Executable)
	}
	if r.ProviderConfig != "" {
		kv("Connection file", r.ProviderConfig)
	}
	kv("Execution backend", m.resolved())
	kv("Completion policy", r.CompletionPolicy)
	kv("Wall time", fmt.Sprintf("%d s", r.WallSeconds))
	kv("Deadline", m.now.Add(time.Duration(r.WallSeconds)*time.Second).UTC().Format("15:04:05 UTC, Mon 2 Jan")+" if launched now")
	kv("Turn time", fmt.Sprintf("%d s", r.TurnSeconds))
	if p, ok := m.probe(); ok && p.Cooperative {
		lines = append(lines, "")
		for _, l := range wrap("⚠ "+engine.CooperativeNotice, w-2) {
			lines = append(lines, "  "+m.c.Styles.Warn.Render(l))
		}
	}
	lines = append(lines, "", "  None of this can change once the study starts; resuming keeps the deadline.")
	// What just happened stays in view above the footer, however long
	// the contract is.
	var foot []string
	if m.busy {
		foot = append(foot, "  Creating the study…")
	}
	if m.err != "" {
		for _, l := range clip(wrap(m.err, w-2), max(1, (h-1)/2), "…") {
			foot = append(foot, "  "+m.c.Styles.Bad.Render(l))
		}
	}
	out := append(block(lines, w, h-1-len(foot)), block(foot, w, len(foot))...)
	if m.help {
		out = overlay(out, helpBox("Keys: review", m.hints()), w)
	}
	out = append(out, m.c.Styles.Bar.Render(fit(footerText(m.hints(), w), w)))
	return strings.Join(out, "\n")
}

// reviewTextLines bounds the rows of the review that hold an operator's
// text; every other value is shown whole.
var reviewTextLines = map[string]int{"Hypothesis": 4, "Instructions": 4}

// kvLines is one row of the review: the key, then the value wrapped under
// itself (never cut, so an unavailable backend's reason reads whole), at
// most maxLines lines when maxLines > 0.
func kvLines(k, v string, w, maxLines int) []string {
	const indent = 2 + 18 + 1
	vs := wrap(v, max(w-indent, 10))
	if len(vs) == 0 {
		vs = []string{""}
	}
	if maxLines > 0 {
		vs = clip(vs, maxLines, "…")
	}
	out := make([]string, len(vs))
	for i, l := range vs {
		key := ""
		if i == 0 {
			key = k
		}
		out[i] = fit(fmt.Sprintf("  %-18s %s", key, l), w)
	}
	return out
}

// launchable reports whether the chosen backend can run (or is not probed yet).
func (m reviewModel) launchable() bool {
	p, ok := m.probe()
	return !ok || p.Available
}

// hints are the review's keys: no launch while the backend is unavailable.
func (m reviewModel) hints() []hint {
	var hs []hint
	if m.launchable() {
		hs = append(hs, hint{"enter", "launch"})
	}
	return append(hs, hint{"esc", "edit"}, hint{"ctrl+c", "quit"}, hintOf(m.c.Keys.Help))
}
