package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/simjecture/simjecture/engine"
)

// detailLines renders the selected experiment or claim, scrolled.
func (m dashModel) detailLines(w int) []string {
	var lines []string
	switch m.focus {
	case paneExperiments:
		exps := m.state.Snapshot.Experiments
		if i := m.sel[paneExperiments]; i < len(exps) {
			lines = m.experimentDetail(exps[i], w)
		}
	case paneClaims:
		claims := m.orderedClaims()
		if i := m.sel[paneClaims]; i < len(claims) {
			lines = m.claimDetail(claims[i].claim, w)
		}
	}
	if len(lines) == 0 {
		lines = []string{"nothing selected"}
	}
	start := min(m.detailScroll, max(0, len(lines)-1))
	return lines[start:]
}

func (m dashModel) experimentDetail(e engine.Receipt, w int) []string {
	out := []string{m.c.Styles.Title.Render("Experiment " + e.ID), ""}
	kv := func(k, v string) { out = append(out, wrap(fmt.Sprintf("%-12s %s", k, v), w)...) }
	kv("status", string(e.Status))
	kv("backend", string(e.IsolationBackend))
	kv("command", strings.TrimSpace(e.Source+e.Capability+" "+strings.Join(e.Args, " ")))
	kv("stage", e.Stage)
	if e.Purpose != "" {
		kv("purpose", e.Purpose)
	}
	if e.Commitment != "" {
		kv("commitment", e.Commitment)
	}
	kv("wall time", optFloat(e.WallSeconds, "%.2f s"))
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
	for _, r := range m.state.Snapshot.Reviews {
		if r.Claim != c.ID {
			continue
		}
		out = append(out, "", fmt.Sprintf("Review %s: %s (%s, %d attempts)", r.ID, r.Disposition, r.Status, r.Attempts))
		if r.Verdict != nil {
			out = append(out, wrap(fmt.Sprintf("  verdict %s %s: %s", r.Verdict.Decision, r.Verdict.Disposition, r.Verdict.Rationale), w)...)
			for _, g := range r.Verdict.EvidenceGaps {
				out = append(out, wrap("  gap: "+g, w)...)
			}
		}
	}
	return out
}
