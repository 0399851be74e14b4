package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

var storySizes = [][2]int{{80, 24}, {120, 36}, {200, 60}}

// TestGoldenStory: the dashboard of the demo, of a 40-experiment study
// and of a cooperative study with its warning, at three sizes.
func TestGoldenStory(t *testing.T) {
	t.Parallel()
	fixtures := []struct {
		name string
		f    func() *fakeEngine
	}{{"demo", demoFixture}, {"many", manyFixture}, {"cooperative", storyFixture}}
	for _, fx := range fixtures {
		for _, size := range storySizes {
			t.Run(fmt.Sprintf("%s_%dx%d", fx.name, size[0], size[1]), func(t *testing.T) {
				m := openStory(t, fx.f(), size[0], size[1])
				v := m.View()
				assertFits(t, v, size[0], size[1])
				golden(t, fmt.Sprintf("story_%s_%dx%d", fx.name, size[0], size[1]), v)
			})
		}
	}
}

// TestGoldenReviewDetail: enter on a review reads its evidence in a Cmd
// and shows the verdict, the next test and the measured values.
func TestGoldenReviewDetail(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		m := openStory(t, demoFixture(), size[0], size[1])
		for m.dash.focus != paneReviews {
			m, _ = step(t, m, keyMsg("tab"))
		}
		m, _ = step(t, m, keyMsg("j"))
		m, cmd := step(t, m, keyMsg("enter"))
		if !strings.Contains(m.View(), "reading the cited experiments…") {
			t.Fatalf("before the read the detail must say it is reading:\n%s", m.View())
		}
		m = feed(t, m, cmd)
		golden(t, fmt.Sprintf("story_review_%dx%d", size[0], size[1]), m.View())
	}
}

func TestReviewDetail(t *testing.T) {
	t.Parallel()
	f := demoFixture()
	m := openStory(t, f, 120, 60)
	for m.dash.focus != paneReviews {
		m, _ = step(t, m, keyMsg("tab"))
	}
	m, _ = step(t, m, keyMsg("j"))
	m, cmd := step(t, m, keyMsg("enter"))
	stale := evidenceMsg{gen: m.dash.gen, review: "rev_8e1f0c2d3b4a5968", items: f.evidence["rev_8e1f0c2d3b4a5968"]}
	m, _ = step(t, m, stale) // the other review's answer: ignored
	if v := m.View(); strings.Contains(v, "0.5812") || !strings.Contains(v, "reading the cited experiments") {
		t.Fatalf("an answer for another review must be ignored:\n%s", v)
	}
	m = feed(t, m, cmd)
	v := m.View()
	for _, want := range []string{"Review rev_9f20d13e4c5b6a79 of claim " + demoRepair, "verdict     approved, supported",
		"rationale   max_rel_energy_error = 6.1e-05", "next test   an eccentricity of 0.99", "Measured (2 experiments cited)",
		"exp_3d44f217a5c68eadbf9140c3 succeeded · measure the energy error of leapfrog", "result.json  max_rel_energy_error = 0.00032"} {
		if !strings.Contains(v, want) {
			t.Errorf("review detail lacks %q:\n%s", want, v)
		}
	}
	m, _ = step(t, m, keyMsg("esc"))
	m.dash.sel[paneReviews] = 0
	f.evidence = nil
	m, cmd = step(t, m, keyMsg("enter"))
	m = feed(t, m, cmd)
	if v := m.View(); !strings.Contains(v, "could not read them: read review rev_8e1f0c2d3b4a5968") {
		t.Errorf("a failed read must say why:\n%s", v)
	}
}

func TestClaimStory(t *testing.T) {
	t.Parallel()
	m := openStory(t, storyFixture(), 200, 60).dash
	cases := []struct {
		claim   string
		exps    int
		verdict string
	}{
		{engine.RootClaim, 1, "falsified (approved)"},
		{"claim_24b0e25f8d33", 1, "supported? (in review)"},
		{"claim_99aa00bb11cc", 0, ""},
	}
	for _, c := range cases {
		if n, v := m.claimExperiments(c.claim), m.claimVerdict(c.claim); n != c.exps || v != c.verdict {
			t.Errorf("%s: %d exp, %q; want %d, %q", c.claim, n, v, c.exps, c.verdict)
		}
	}
	row := m.claimRows(100)[0]
	for _, want := range []string{"× root", "Explicit Euler conserves", "1 exp", "falsified (approved)"} {
		if !strings.Contains(row, want) {
			t.Errorf("root row %q lacks %q", row, want)
		}
	}
}

// TestExperimentsRunningFirst: with 40 experiments the running ones lead
// the list and the title counts the statuses of the whole study.
func TestExperimentsRunningFirst(t *testing.T) {
	t.Parallel()
	m := openStory(t, manyFixture(), 80, 24).dash
	order := m.experimentOrder()
	want := []engine.ExpStatus{engine.ExpRunning, engine.ExpRunning, engine.ExpRunning, engine.ExpQueued, engine.ExpQueued, engine.ExpSucceeded}
	for i, st := range want {
		if order[i].Status != st {
			t.Fatalf("row %d is %s, want %s", i, order[i].Status, st)
		}
	}
	if order[5].ID != m.state.Snapshot.Experiments[34].ID {
		t.Errorf("the finished experiments must be newest first, got %s", order[5].ID)
	}
	if got, want := m.experimentTitle(40), "Experiments (40) · 3 running · 2 queued · 30 ✓ · 5 ×"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	m.state.Snapshot.ExperimentCounts[engine.ExpSucceeded] += 3000
	if got := m.experimentTitle(40); !strings.HasPrefix(got, "Experiments (newest 40 of 3040) · 3 running") {
		t.Errorf("title %q", got)
	}
}
