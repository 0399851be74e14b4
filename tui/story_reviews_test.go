package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/simjecture/simjecture/engine"
)

// TestReviewRows: a Reviews row reads as the story does — glyph, id,
// claim, disposition · decision or pending with its attempt, experiments
// cited — and a narrow pane drops the count, then the attempt, then the id.
func TestReviewRows(t *testing.T) {
	t.Parallel()
	m := openStory(t, demoFixture(), 200, 60).dash
	rs := m.state.Snapshot.Reviews
	rs[1].Verdict, rs[1].Status, rs[1].Attempts, rs[1].Experiments = nil, "queued", 1, rs[1].Experiments[:1]
	rs = append(rs, engine.Review{ID: "rev_aa00bb11cc22dd33", Claim: engine.RootClaim, Disposition: "supported", Status: "failed", Attempts: 3,
		Verdict: nil}, engine.Review{ID: "rev_bb", Claim: engine.RootClaim, Disposition: "supported", Status: "resolved", Attempts: 1,
		Verdict: &engine.Verdict{Decision: "needs_revision", Disposition: "supported"}})
	m.state.Snapshot.Reviews = rs
	cases := []struct {
		w    int
		want []string
	}{
		{80, []string{
			"✓ rev_8e1f0c2d root          falsified · approved             2 exp",
			"● rev_9f20d13e claim_5c1e0a  supported · pending (attempt 2)  1 exp",
			"? rev_aa00bb11 root          supported · failed (3 attempts)  0 exp",
			"× rev_bb       root          supported · needs_revision       0 exp"}},
		{64, []string{
			"✓ rev_8e1f0c2d root          falsified · approved",
			"● rev_9f20d13e claim_5c1e0a  supported · pending (attempt 2)"}},
		{58, []string{
			"✓ rev_8e1f0c2d root          falsified · approved",
			"● rev_9f20d13e claim_5c1e0a  supported · pending"}},
		{50, []string{
			"✓ root          falsified · approved",
			"● claim_5c1e0a  supported · pending"}},
	}
	for _, c := range cases {
		rows := m.reviewRows(c.w)
		for i, want := range c.want {
			if got := strings.TrimRight(ansi.Strip(rows[i]), " "); got != want {
				t.Errorf("w %d row %d:\n got %q\nwant %q", c.w, i, got, want)
			}
		}
	}
}
