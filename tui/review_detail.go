package tui

import (
	"context"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// The review detail (`enter` on the Reviews pane) says what the reviewer
// decided and why, and what the experiments it cites measured: their key
// artifact values, read by engine.ReviewEvidence in a Cmd when the detail
// opens (bounded to engine.EvidenceExperiments experiments and
// engine.EvidenceValues values each).

// reviewEvidence is the detail's read of a review's experiments.
type reviewEvidence struct {
	review  string
	items   []engine.Evidence
	err     string
	loading bool
}

// evidenceMsg is the result of evidenceCmd.
type evidenceMsg struct {
	gen    int
	review string
	items  []engine.Evidence
	err    error
}

// Evidence reads the experiments a review cites and their values.
func (s *liveStudy) Evidence(ctx context.Context, review string) ([]engine.Evidence, error) {
	return s.view.ReviewEvidence(ctx, review)
}

func (m dashModel) evidenceCmd(review string) tea.Cmd {
	s, ctx, gen := m.study, m.ctx, m.gen
	return func() tea.Msg {
		items, err := s.Evidence(ctx, review)
		return evidenceMsg{gen: gen, review: review, items: items, err: err}
	}
}

// selectedReview is the Reviews pane's selected review.
func (m dashModel) selectedReview() (engine.Review, bool) {
	rs := m.state.Snapshot.Reviews
	if i := m.sel[paneReviews]; i < len(rs) {
		return rs[i], true
	}
	return engine.Review{}, false
}

// openDetail opens the focused pane's detail; a review's asks for its evidence.
func (m dashModel) openDetail() (dashModel, tea.Cmd) {
	m.detail, m.detailScroll = m.hasDetail(), 0
	r, ok := m.selectedReview()
	if !m.detail || m.focus != paneReviews || !ok || m.study == nil {
		return m, nil
	}
	m.evidence = reviewEvidence{review: r.ID, loading: true}
	return m, m.evidenceCmd(r.ID)
}

func (m dashModel) handleEvidence(msg evidenceMsg) (dashModel, tea.Cmd) {
	if msg.gen != m.gen || msg.review != m.evidence.review {
		return m, nil
	}
	m.evidence.loading, m.evidence.items, m.evidence.err = false, msg.items, ""
	if msg.err != nil {
		m.evidence.err = msg.err.Error()
	}
	return m, nil
}

// reviewDetail is the selected review: request, verdict, gaps, next test,
// then the measured values of its experiments.
func (m dashModel) reviewDetail(w int) []string {
	r, ok := m.selectedReview()
	if !ok {
		return nil
	}
	out := []string{m.c.Styles.Title.Render(fmt.Sprintf("Review %s of claim %s", r.ID, r.Claim)), ""}
	kv := func(k, v string) {
		if v != "" {
			out = append(out, wrap(fmt.Sprintf("%-11s %s", k, v), w)...)
		}
	}
	kv("asks", reviewAsks(r))
	kv("status", fmt.Sprintf("%s · %d attempt%s", r.Status, r.Attempts, plural(r.Attempts)))
	kv("conclusion", oneLine(r.Conclusion))
	if c := r.Challenge; c != nil {
		kv("challenge", strings.TrimSuffix(c.Strategy+": "+c.Outcome, ": "))
	}
	kv("last error", r.LastError)
	if v := r.Verdict; v != nil {
		kv("verdict", v.Decision+", "+v.Disposition)
		kv("rationale", oneLine(v.Rationale))
		for _, g := range v.EvidenceGaps {
			kv("gap", oneLine(g))
		}
		if v.NextTest != nil {
			kv("next test", oneLine(*v.NextTest))
		}
	}
	return append(out, m.evidenceLines(r, w)...)
}

// evidenceLines are the measured values of the review's experiments.
func (m dashModel) evidenceLines(r engine.Review, w int) []string {
	out := []string{"", m.c.Styles.Title.Render(fmt.Sprintf("Measured (%d experiments cited)", len(r.Experiments)))}
	ev := m.evidence
	switch {
	case len(r.Experiments) == 0:
		return append(out, "  none")
	case ev.review != r.ID || ev.loading:
		return append(out, "  reading the cited experiments…")
	case ev.err != "":
		return append(out, indent(wrap("could not read them: "+ev.err, w-2), "  ")...)
	}
	for _, e := range ev.items {
		head := strings.TrimSpace(fmt.Sprintf("%s %s", e.Experiment, e.Status))
		if e.Purpose != "" {
			head += " · " + oneLine(e.Purpose)
		}
		out = append(out, indent(wrap(head, w-2), "  ")...)
		for _, v := range e.Values {
			out = append(out, fit(fmt.Sprintf("    %s  %s = %s", v.Artifact, v.Field, v.Value), w))
		}
		if e.Note != "" {
			out = append(out, indent(wrap("("+e.Note+")", w-4), "    ")...)
		}
	}
	if n := len(r.Experiments) - len(ev.items); n > 0 {
		out = append(out, fmt.Sprintf("  … and %d more (simjecture status --json lists them)", n))
	}
	return out
}

// indent puts prefix before each line.
func indent(lines []string, prefix string) []string {
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return lines
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
