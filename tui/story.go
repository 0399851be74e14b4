package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/simjecture/simjecture/engine"
)

// This file tells the study's story on the dashboard: which experiments
// stand behind each claim and what its review decided, and the order and
// counts of the experiments.

// expRank orders the Experiments pane: running first (never out of view),
// then queued, then the finished ones.
func (m dashModel) expRank(e engine.Receipt) int {
	switch m.expStatus(e) {
	case engine.ExpRunning:
		return 0
	case engine.ExpQueued:
		return 1
	}
	return 2
}

// experimentOrder is the Experiments pane's order: running, then queued
// (each oldest first), then the finished ones newest first. The pane, its
// detail and its log viewer all index this order, worked out once per
// snapshot (expTable).
func (m dashModel) experimentOrder() []engine.Receipt { return m.exps.order }

// orderExperiments sorts the snapshot's experiments in experimentOrder.
func (m dashModel) orderExperiments() []engine.Receipt {
	exps := m.state.Snapshot.Experiments
	out := make([]engine.Receipt, 0, len(exps))
	for rank := range 3 {
		start := len(out)
		for _, e := range exps {
			if m.expRank(e) == rank {
				out = append(out, e)
			}
		}
		if rank == 2 {
			slices.Reverse(out[start:])
		}
	}
	return out
}

// experimentTitle is the Experiments pane's title: how many, and how many
// of the whole study are in each status (`Experiments (40) · 3 running ·
// 30 ✓ · 5 ×`).
func (m dashModel) experimentTitle(n int) string {
	title := fmt.Sprintf("%s (%d)", paneNames[paneExperiments], n)
	if total := m.experimentTotal(); total > n {
		title = fmt.Sprintf("%s (newest %d of %d)", paneNames[paneExperiments], n, total)
	}
	c := m.state.Snapshot.ExperimentCounts
	running := "running"
	if m.interrupted() {
		running = "interrupted"
	}
	parts := []struct {
		n    int
		word string
	}{
		{c[engine.ExpRunning], running}, {c[engine.ExpQueued], "queued"}, {c[engine.ExpSucceeded], "✓"},
		{c[engine.ExpFailed] + c[engine.ExpTimedOut], "×"}, {c[engine.ExpCancelled], "cancelled"},
		{c[engine.ExpInterrupted], "interrupted"},
	}
	for _, p := range parts {
		if p.n > 0 {
			title += fmt.Sprintf(" · %d %s", p.n, p.word)
		}
	}
	return title
}

// claimExperiments is how many experiments stand behind claim id.
func (m dashModel) claimExperiments(id string) int { return len(m.exps.byClaim[id]) }

// claimVerdict is the short verdict of claim id: its newest resolved
// review's `falsified (approved)`, else a pending review's disposition.
func (m dashModel) claimVerdict(id string) string {
	pending := ""
	reviews := m.state.Snapshot.Reviews
	for i := len(reviews) - 1; i >= 0; i-- {
		r := reviews[i]
		switch {
		case r.Claim != id:
		case r.Verdict != nil:
			if r.Verdict.Disposition == "" { // a scientific verdict: its stage's decision
				return fmt.Sprintf("%s %s", r.Stage, r.Verdict.Decision)
			}
			return fmt.Sprintf("%s (%s)", r.Verdict.Disposition, r.Verdict.Decision)
		case pending == "":
			pending = reviewAsks(r) + "? (in review)"
		}
	}
	return pending
}

// claimRows is the claim tree: marker, id, statement, then the number of
// experiments behind the claim and its short verdict, aligned at the right
// of w. Every row has the same columns (a row with no verdict keeps its
// blank), so the counts line up.
func (m dashModel) claimRows(w int) []string {
	nodes := m.orderedClaims()
	lefts, counts, verdicts := make([]string, len(nodes)), make([]string, len(nodes)), make([]string, len(nodes))
	cw, vw, lmin, lmax := 0, 0, w, 0
	for i, n := range nodes {
		c := n.claim
		mark := m.statusStyle(c.Status).Render(claimMarker(c.Status))
		lefts[i] = fmt.Sprintf("%s%s %s  ", strings.Repeat("  ", n.depth), mark, shortID(c.ID))
		counts[i], verdicts[i] = m.ledgerColumns(c)
		cw, vw = max(cw, len(counts[i])), max(vw, ansi.StringWidth(verdicts[i]))
		lw := ansi.StringWidth(lefts[i]) + ansi.StringWidth(m.claimTag(c)) // the tag comes before the statement's room
		lmin, lmax = min(lmin, lw), max(lmax, lw)
	}
	cols := claimCols(w-2-lmin, w-2-lmax, cw, vw)
	out := make([]string, 0, len(nodes))
	for i, n := range nodes {
		right := ""
		if cols > 0 {
			right = fmt.Sprintf("  %*s", cw, counts[i])
		}
		if cols > 1 && vw > 0 {
			right += "  " + fit(verdicts[i], vw)
		}
		room := w - 2 - ansi.StringWidth(lefts[i]) - ansi.StringWidth(right)
		out = append(out, lefts[i]+fit(m.claimTag(n.claim)+oneLine(n.claim.Statement), room)+right)
	}
	return out
}

// claimCols is how many of the count and verdict columns (cw and vw wide)
// the claim rows show when the statements have between deep and shallow
// cells: as many as leave the shallowest row's statement 8 cells and the
// deepest's 2. Too narrow, the verdict goes first, then the count.
func claimCols(shallow, deep, cw, vw int) int {
	right := []int{0, 2 + cw, 2 + cw}
	if vw > 0 {
		right[2] += 2 + vw
	}
	for cols := 2; cols > 0; cols-- {
		if shallow-right[cols] >= 8 && deep-right[cols] >= 2 {
			return cols
		}
	}
	return 0
}

// storyCols are the Experiments pane's CLAIM and PURPOSE columns: the claim
// the run serves (structured and frontier), else the claim it was
// committed for (minimal).
func storyCols(e engine.Receipt) string {
	claim := "—"
	switch {
	case e.Claim != "":
		claim = shortID(e.Claim)
	case e.Commitment != "":
		claim = shortID(e.Commitment)
	}
	return fmt.Sprintf("%-12s %s", claim, oneLine(e.Purpose))
}

// keepExperimentSelection puts the Experiments selection back on the
// experiment it was on in prev, the order before a refresh: the order
// moves experiments as they start and finish (running first, then queued,
// then finished newest first), and the row, its detail and the log viewer
// stay on the experiment the operator chose.
func (m dashModel) keepExperimentSelection(prev []engine.Receipt) dashModel {
	i := m.sel[paneExperiments]
	if i >= len(prev) {
		return m
	}
	for j, e := range m.experimentOrder() {
		if e.ID == prev[i].ID {
			m.sel[paneExperiments] = j
			break
		}
	}
	return m
}
