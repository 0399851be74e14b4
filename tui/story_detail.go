package tui

import (
	"fmt"
	"slices"

	"github.com/simjecture/simjecture/engine"
)

// The details' side of the story: a claim lists its experiments, an
// experiment names its claim and the reviews that cite it.

// claimExperimentIDs are the experiments behind claim id: those committed
// to it (of the experiments the dashboard holds, in the pane's order),
// then those its reviews cite (every one, however old); expTable holds
// them.
func (m dashModel) claimExperimentIDs(id string) []string { return m.exps.byClaim[id] }

// claimExperimentLines are a claim detail's experiments, each with its
// status and purpose (an experiment older than those the dashboard holds
// shows only its id).
func (m dashModel) claimExperimentLines(id string, w int) []string {
	ids := m.claimExperimentIDs(id)
	out := []string{"", m.c.Styles.Title.Render(fmt.Sprintf("Experiments (%d)", len(ids)))}
	if len(ids) == 0 {
		return append(out, "  none yet")
	}
	held := map[string]engine.Receipt{}
	for _, e := range m.state.Snapshot.Experiments {
		held[e.ID] = e
	}
	for _, x := range ids {
		line := x + "  (older than the experiments shown)"
		if e, ok := held[x]; ok {
			line = fmt.Sprintf("%s %s", x, m.expStatus(e))
			if e.Purpose != "" {
				line += " · " + oneLine(e.Purpose)
			}
		}
		out = append(out, indent(wrap(line, w-2), "  ")...)
	}
	return out
}

// citingReviews are the reviews that cite experiment id.
func (m dashModel) citingReviews(id string) []engine.Review {
	var out []engine.Review
	for _, r := range m.state.Snapshot.Reviews {
		if slices.Contains(r.Experiments, id) {
			out = append(out, r)
		}
	}
	return out
}

// claimLabel is a claim's id and its statement: `root · Explicit Euler…`.
func (m dashModel) claimLabel(id string) string {
	for _, c := range m.state.Snapshot.Claims {
		if c.ID == id {
			return id + " · " + oneLine(c.Statement)
		}
	}
	return id
}

// reviewLabel is a review as an experiment's detail names it:
// `rev_8e1f… of root: falsified · approved`.
func (m dashModel) reviewLabel(r engine.Review) string {
	p := m.reviewParts(r)
	return fmt.Sprintf("%s %s of %s: %s · %s%s", p.glyph, r.ID, r.Claim, p.asked, p.state, p.attempt)
}
