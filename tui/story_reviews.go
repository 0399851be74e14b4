package tui

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"

	"github.com/simjecture/simjecture/engine"
)

// reviewParts are a Reviews row's columns, most important first but for
// the count: the verdict glyph and id, the claim, the disposition asked
// with the decision or the pending state, and the experiments cited.
type reviewParts struct {
	glyph, id, claim, asked, state, attempt, count string
}

// reviewGlyph is a review's verdict glyph: ✓ approved, × needs revision,
// ● pending, ? anything else (a review that ended with no verdict).
func reviewGlyph(r engine.Review) string {
	switch {
	case r.Verdict == nil && r.Status == "queued":
		return "●"
	case r.Verdict == nil:
		return "?"
	case r.Verdict.Decision == "approved", r.Verdict.Decision == engine.DecisionSufficient:
		return "✓"
	}
	return "×"
}

func (m dashModel) reviewParts(r engine.Review) reviewParts {
	p := reviewParts{glyph: reviewGlyph(r), id: shortID(r.ID), claim: shortID(r.Claim), asked: reviewAsks(r),
		count: fmt.Sprintf("%d exp", len(r.Experiments))}
	switch {
	case r.Verdict != nil:
		p.state = r.Verdict.Decision
	case r.Status == "queued":
		p.state = "pending"
		if r.Attempts > 0 {
			p.attempt = fmt.Sprintf(" (attempt %d)", r.Attempts+1)
		}
	default:
		p.state = r.Status
		p.attempt = fmt.Sprintf(" (%d attempt%s)", r.Attempts, plural(r.Attempts))
	}
	return p
}

// reviewGlyphStyle colours the glyph; the glyph carries the meaning.
func (m dashModel) reviewGlyphStyle(g string) string {
	word := map[string]string{"✓": "supported", "×": "falsified", "●": "running"}[g]
	return m.statusStyle(word).Render(g)
}

// reviewRows lists the reviews in w cells, their columns aligned:
// `✓ rev_47ebfa35 root  falsified · approved  3 exp`. Too narrow, the
// count goes first, then the attempt, then the review's id.
func (m dashModel) reviewRows(w int) []string {
	rs := m.state.Snapshot.Reviews
	parts := make([]reviewParts, len(rs))
	for i, r := range rs {
		parts[i] = m.reviewParts(r)
	}
	var rows []string
	for level := range 4 {
		rows = m.reviewLevel(parts, level)
		if widest(rows) <= w-2 {
			break
		}
	}
	return rows
}

// reviewLevel renders the rows with the level least important parts left out.
func (m dashModel) reviewLevel(parts []reviewParts, level int) []string {
	iw, cw, ow, nw := 0, 0, 0, 0
	outcome := func(p reviewParts) string {
		if level >= 2 {
			return p.asked + " · " + p.state
		}
		return p.asked + " · " + p.state + p.attempt
	}
	for _, p := range parts {
		iw, cw, ow, nw = max(iw, len(p.id)), max(cw, len(p.claim)), max(ow, ansi.StringWidth(outcome(p))), max(nw, len(p.count))
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		row := m.reviewGlyphStyle(p.glyph) + " "
		if level < 3 {
			row += fmt.Sprintf("%-*s ", iw, p.id)
		}
		row += fmt.Sprintf("%-*s  %s", cw, p.claim, fit(outcome(p), ow))
		if level < 1 {
			row += fmt.Sprintf("  %*s", nw, p.count)
		}
		out = append(out, row)
	}
	return out
}

// widest is the width of the widest row.
func widest(rows []string) int {
	w := 0
	for _, r := range rows {
		w = max(w, ansi.StringWidth(r))
	}
	return w
}
