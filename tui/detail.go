package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// detailLines is the whole detail of the selected study, claim or experiment.
func (m dashModel) detailLines(w int) []string {
	var lines []string
	switch m.focus {
	case paneStudy:
		lines = m.studyDetail(w)
	case paneExperiments:
		exps := m.experimentOrder()
		if i := m.sel[paneExperiments]; i < len(exps) {
			lines = m.experimentDetail(exps[i], w)
		}
	case paneReviews:
		lines = m.reviewDetail(w)
	case paneClaims:
		claims := m.orderedClaims()
		if i := m.sel[paneClaims]; i < len(claims) {
			lines = m.claimDetail(claims[i].claim, w)
		}
	}
	if len(lines) == 0 {
		lines = []string{"nothing selected"}
	}
	return lines
}

// detailView is the detail scrolled into h lines, the last of which says
// where the view is: "lines 1–20 of 43 · 46%".
func (m dashModel) detailView(w, h int) []string {
	lines := m.detailLines(w)
	page := max(1, h-1)
	start := min(m.detailScroll, max(0, len(lines)-page))
	end := min(len(lines), start+page)
	pos := fmt.Sprintf("lines %d–%d of %d", start+1, end, len(lines))
	if len(lines) > page {
		pos += fmt.Sprintf(" · %d%%", end*100/len(lines))
	}
	out := block(lines[start:end], w, page)
	return append(out, m.c.Styles.Dim.Render(fit(pos, w)))
}

// maxDetailScroll is the last scroll offset that still fills the view.
func (m dashModel) maxDetailScroll() int {
	return max(0, len(m.detailLines(m.mainWidth()))-max(1, m.bodyHeight()-1))
}

// handleDetailKey scrolls the detail view, clamped to its end.
func (m dashModel) handleDetailKey(msg tea.KeyMsg) (dashModel, tea.Cmd) {
	k := m.c.Keys
	page := max(1, m.bodyHeight()-2)
	switch {
	case key.Matches(msg, k.Help):
		m.help = true
	case key.Matches(msg, k.Up):
		m.detailScroll--
	case key.Matches(msg, k.Down):
		m.detailScroll++
	case key.Matches(msg, k.PageUp):
		m.detailScroll -= page
	case key.Matches(msg, k.PageDown):
		m.detailScroll += page
	case key.Matches(msg, k.Top):
		m.detailScroll = 0
	case key.Matches(msg, k.Bottom):
		m.detailScroll = m.maxDetailScroll()
	case key.Matches(msg, k.Back, k.Enter, k.Quit, k.Dismiss):
		m.detail = false
	}
	m.detailScroll = max(0, min(m.detailScroll, m.maxDetailScroll()))
	return m, nil
}

// studyDetail is the Study pane in full: every message, unwrapped.
func (m dashModel) studyDetail(w int) []string {
	s := m.state.Snapshot
	out := []string{m.c.Styles.Title.Render("Study " + baseName(m.dir)), ""}
	kv := func(k, v string) {
		if v != "" {
			out = append(out, wrap(fmt.Sprintf("%-11s %s", k, v), w)...)
		}
	}
	kv("folder", m.dir)
	kv("status", string(s.Status))
	kv("mode", m.roleText())
	kv("hypothesis", m.hypothesis())
	kv("activity", s.Activity)
	kv("deadline", m.deadlineText())
	kv("provider", m.providerLine())
	kv("attention", m.attention())
	kv("last error", s.LastError)
	kv("supervisor", m.state.RunErr)
	kv("message", m.flash)
	return out
}

func (m dashModel) experimentDetail(e engine.Receipt, w int) []string {
	out := []string{m.c.Styles.Title.Render("Experiment " + e.ID), ""}
	kv := func(k, v string) { out = append(out, wrap(fmt.Sprintf("%-12s %s", k, v), w)...) }
	kv("status", string(m.expStatus(e)))
	kv("backend", string(e.IsolationBackend))
	kv("machine", machineText(e))
	kv("command", strings.TrimSpace(e.Source+e.Capability+" "+strings.Join(e.Args, " ")))
	kv("stage", e.Stage)
	if e.Purpose != "" {
		kv("purpose", e.Purpose)
	}
	if e.Commitment != "" {
		kv("claim", m.claimLabel(e.Commitment))
	}
	for _, r := range m.citingReviews(e.ID) {
		kv("cited by", m.reviewLabel(r))
	}
	kv("wall time", m.wallDetail(e))
	if e.PeakRSSBytes != nil {
		kv("peak memory", human(*e.PeakRSSBytes))
	} else {
		kv("peak memory", "unknown")
	}
	if e.ReturnCode != nil {
		kv("exit code", fmt.Sprint(*e.ReturnCode))
	}
	if e.Signal != nil {
		kv("signal", *e.Signal)
	}
	if e.LimitExceeded != nil {
		kv("limit", *e.LimitExceeded)
	}
	if e.Error != "" {
		kv("error", e.Error)
	}
	names := make([]string, 0, len(e.Artifacts))
	for n := range e.Artifacts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := e.Artifacts[n]
		kv("artifact", fmt.Sprintf("%s (%s, sha256 %.12s)", n, human(a.Bytes), a.SHA256))
	}
	kv("folder", e.ArtifactDir)
	for _, t := range []struct{ name, text string }{{"stdout", e.StdoutTail}, {"stderr", e.StderrTail}} {
		if strings.TrimSpace(t.text) != "" {
			out = append(out, "", t.name+":")
			out = append(out, wrap(t.text, w)...)
		}
	}
	return out
}

func optFloat(f *float64, format string) string {
	if f == nil {
		return "unknown"
	}
	return fmt.Sprintf(format, *f)
}

func (m dashModel) claimDetail(c engine.Claim, w int) []string {
	out := []string{m.c.Styles.Title.Render(fmt.Sprintf("Claim %s  %s %s", c.ID, claimMarker(c.Status), c.Status)), ""}
	out = append(out, wrap(c.Statement, w)...)
	kv := func(k, v string) {
		if v != "" {
			out = append(out, wrap(fmt.Sprintf("%-11s %s", k, v), w)...)
		}
	}
	out = append(out, "")
	if c.Parent != nil {
		kv("parent", *c.Parent)
	}
	kv("acceptance", c.Acceptance)
	kv("rationale", c.Rationale)
	out = append(out, m.ledgerDetail(c, w)...)
	out = append(out, m.claimExperimentLines(c.ID, w)...)
	for _, r := range m.state.Snapshot.Reviews {
		if r.Claim != c.ID {
			continue
		}
		out = append(out, "", fmt.Sprintf("Review %s: %s (%s, %d attempts)", r.ID, reviewAsks(r), r.Status, r.Attempts))
		if r.Verdict != nil {
			out = append(out, wrap(fmt.Sprintf("  verdict %s%s: %s", r.Verdict.Decision, verdictOf(r.Verdict), r.Verdict.Rationale), w)...)
			for _, g := range r.Verdict.EvidenceGaps {
				out = append(out, wrap("  gap: "+g, w)...)
			}
		}
	}
	return out
}

// machineText is where an experiment ran: this host, or a worker with its
// host and job.
func machineText(e engine.Receipt) string {
	switch {
	case e.Remote != nil && e.Remote.Scheduler != "":
		parts := []string{e.Remote.Scheduler + " job " + e.Remote.Job}
		for _, p := range []string{e.Remote.State, "node " + e.Remote.Node} {
			if p != "" && p != "node " {
				parts = append(parts, p)
			}
		}
		return e.Machine + " (" + strings.Join(parts, ", ") + ")"
	case e.Remote != nil:
		return fmt.Sprintf("%s (%s, job %s)", e.Machine, e.Remote.Host, e.Remote.Job)
	case e.Machine == "" || e.Machine == "local":
		return "local (this host)"
	}
	return e.Machine
}

// verdictOf is what a verdict's decision line adds: minimal's disposition
// (` falsified`), or the contract version a scientific verdict judged
// (` on contract v2`).
func verdictOf(v *engine.Verdict) string {
	switch {
	case v.Disposition != "":
		return " " + v.Disposition
	case v.ContractVersion > 0:
		return fmt.Sprintf(" on contract v%d", v.ContractVersion)
	}
	return ""
}
