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
// detail and its log viewer all index this order.
func (m dashModel) experimentOrder() []engine.Receipt {
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

// claimExperiments is how many experiments stand behind claim id: those
// committed to it (of the experiments the dashboard holds) and those its
// reviews cite (every one, however old).
func (m dashModel) claimExperiments(id string) int {
	seen := map[string]bool{}
	for _, e := range m.state.Snapshot.Experiments {
		if e.Commitment == id {
			seen[e.ID] = true
		}
	}
	for _, r := range m.state.Snapshot.Reviews {
		if r.Claim == id {
			for _, x := range r.Experiments {
				seen[x] = true
			}
		}
	}
	return len(seen)
}

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
			return fmt.Sprintf("%s (%s)", r.Verdict.Disposition, r.Verdict.Decision)
		case pending == "":
			pending = r.Disposition + "? (in review)"
		}
	}
	return pending
}

// claimRows is the claim tree: marker, id, statement, then the number of
// experiments behind the claim and its short verdict, aligned at the right
// of w.
func (m dashModel) claimRows(w int) []string {
	nodes := m.orderedClaims()
	counts, verdicts := make([]string, len(nodes)), make([]string, len(nodes))
	cw, vw := 0, 0
	for i, n := range nodes {
		counts[i] = fmt.Sprintf("%d exp", m.claimExperiments(n.claim.ID))
		verdicts[i] = m.claimVerdict(n.claim.ID)
		cw, vw = max(cw, len(counts[i])), max(vw, ansi.StringWidth(verdicts[i]))
	}
	out := make([]string, 0, len(nodes))
	for i, n := range nodes {
		c := n.claim
		mark := m.statusStyle(c.Status).Render(claimMarker(c.Status))
		left := fmt.Sprintf("%s%s %s  ", strings.Repeat("  ", n.depth), mark, shortID(c.ID))
		out = append(out, left+claimTail(oneLine(c.Statement), w-2-ansi.StringWidth(left),
			fmt.Sprintf("  %*s", cw, counts[i]), "  "+fit(verdicts[i], vw)))
	}
	return out
}

// claimTail is a claim's statement in w cells, followed by as many of its
// count and verdict columns as leave the statement 8 cells: too narrow, the
// verdict goes first, then the count.
func claimTail(statement string, w int, count, verdict string) string {
	for _, right := range []string{count + verdict, count} {
		if room := w - ansi.StringWidth(right); room >= 8 {
			return fit(statement, room) + right
		}
	}
	return statement
}

// storyCols are the Experiments pane's CLAIM and PURPOSE columns.
func storyCols(e engine.Receipt) string {
	claim := "—"
	if e.Commitment != "" {
		claim = shortID(e.Commitment)
	}
	return fmt.Sprintf("%-12s %s", claim, oneLine(e.Purpose))
}
