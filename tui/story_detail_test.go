package tui

import (
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestStoryDetails: a claim's detail lists its experiments (committed and
// cited) with status and purpose; an experiment's names its claim and the
// reviews that cite it.
func TestStoryDetails(t *testing.T) {
	t.Parallel()
	f := demoFixture()
	s := &f.state.Snapshot
	s.Reviews[0].Experiments = append(s.Reviews[0].Experiments, "exp_ffff0000ffff0000ffff0000") // older than those held
	s.Experiments[2].Commitment = engine.RootClaim                                              // committed to root, cited for the repair
	m := openStory(t, f, 200, 80).dash
	lines := func(ls []string) string { return strings.Join(ls, "\n") }
	cases := []struct {
		name      string
		text      string
		want, not []string
	}{
		{"root", lines(m.claimDetail(s.Claims[0], 190)), []string{
			"Experiments (4)",
			"  exp_2c33e106f4b57d9cae803fb2 succeeded · measure the energy error of leapfrog at the stated case",
			"  exp_0a11c9e4d2f35b7a8c6e1d90 succeeded · measure the energy error of forward Euler at the stated case",
			"  exp_1b22d0f5e3a46c8b9d7f2ea1 succeeded · challenge: forward Euler",
			"  exp_ffff0000ffff0000ffff0000  (older than the experiments shown)"}, []string{"exp_3d44"}},
		{"repair", lines(m.claimDetail(s.Claims[1], 190)), []string{"Experiments (2)", "exp_3d44f217a5c68eadbf9140c3 succeeded · challenge: leapfrog"}, []string{"exp_0a11"}},
		{"no experiments", lines(m.claimDetail(engine.Claim{ID: "claim_x"}, 190)), []string{"Experiments (0)", "  none yet"}, nil},
		{"experiment", lines(m.experimentDetail(s.Experiments[0], 190)), []string{
			"claim        root · Explicit (forward) Euler conserves",
			"cited by     ✓ rev_8e1f0c2d3b4a5968 of root: falsified · approved"}, []string{"rev_9f20"}},
		{"committed to one claim, cited for another", lines(m.experimentDetail(s.Experiments[2], 190)), []string{
			"claim        root ·", "cited by     ✓ rev_9f20d13e4c5b6a79 of " + demoRepair + ": supported · approved"}, []string{"rev_8e1f"}},
	}
	for _, c := range cases {
		for _, w := range c.want {
			if !strings.Contains(c.text, w) {
				t.Errorf("%s: lacks %q:\n%s", c.name, w, c.text)
			}
		}
		for _, w := range c.not {
			if strings.Contains(c.text, w) {
				t.Errorf("%s: must not show %q:\n%s", c.name, w, c.text)
			}
		}
	}
}
