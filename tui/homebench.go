package tui

import (
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

// This file is the home screen's section of benchmark runs: the grade
// reports found in the folders the home scans for studies
// (engine.ListBenchRuns), newest first. The section is absent when there
// are none, and takes at most a third of the screen.

// benchLines is the benchmark section for a screen w×h ("" lines: none).
func (m homeModel) benchLines(w, h int) []string {
	if len(m.benches) == 0 {
		return nil
	}
	room := max(1, h/3-2)
	out := []string{"", m.c.Styles.Title.Render(fit(fmt.Sprintf("Benchmark runs (%d)", len(m.benches)), w)),
		m.c.Styles.Dim.Render(fit(fmt.Sprintf("  %-16s %-22s %-6s %6s %11s %s", "TASK", "MODEL / AGENT", "GRADE", "CHECKS", "TIME", "WRITTEN"), w))}
	for i, b := range m.benches {
		if i == room-1 && len(m.benches) > room {
			out = append(out, m.c.Styles.Dim.Render(fit(fmt.Sprintf("  … %d more", len(m.benches)-i), w)))
			break
		}
		out = append(out, "  "+m.benchRow(b, w-2))
	}
	return out
}

// benchRow is one report: task, model/agent, passed or failed, checks
// passed of all, the trial's wall time (else the grading's, so marked)
// and when the report was written (UTC).
func (m homeModel) benchRow(b engine.BenchEntry, w int) string {
	grade := "failed"
	if b.Passed {
		grade = "passed"
	}
	who := b.Model
	if b.Agent != "" {
		who = joinNonEmpty(who, b.Agent)
	}
	if who == "" {
		who = "—"
	}
	took := seconds(b.GradeSeconds) + " grade"
	if b.WallSeconds != nil {
		took = seconds(*b.WallSeconds)
	}
	when := "—"
	if !b.ModTime.IsZero() {
		when = b.ModTime.UTC().Format("01-02 15:04")
	}
	st := statusStyle(m.c.Styles, map[bool]string{true: "succeeded", false: "failed"}[b.Passed])
	return fit(fmt.Sprintf("%-16s %-22s %s %6s %11s %s", fit(b.Task, 16), fit(who, 22), padStyled(st, grade, 6),
		fmt.Sprintf("%d/%d", b.ChecksPassed, b.Checks), took, when), w)
}

// joinNonEmpty is "a / b", or whichever is not empty.
func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " / " + b
}
