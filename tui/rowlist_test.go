package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/engine"
)

// TestFilterMemoFollowsWhatChanges: the filter remembers its matches, but
// a running experiment's WALL is matched again each frame, a new snapshot
// or process sample is filtered anew, and two models that share the memo
// (a model and a copy that took another snapshot) each see their own rows.
func TestFilterMemoFollowsWhatChanges(t *testing.T) {
	t.Parallel()
	f := fixture() // exp_7414… runs since t0-90s: WALL 1m30s
	m := openDash(t, f, false, 120, 40)
	m = typeKeys(t, m, keyMsg("tab"))
	m = typeKeys(t, m, append(typed("/"), typed("1m3")...)...)
	ids := func(m Model) []string {
		var out []string
		for _, i := range m.dash.shown(paneExperiments) {
			out = append(out, m.dash.experimentOrder()[i].ID)
		}
		return out
	}
	if got := ids(m); !slices.Equal(got, []string{"exp_7414d181768254f796d579ab"}) {
		t.Fatalf("at 1m30s the filter 1m3 shows %v, want the running experiment", got)
	}
	later, _ := step(t, m, tickMsg{gen: m.dash.gen, now: t0.Add(20 * time.Second)}) // WALL 1m50s
	if got := ids(later); len(got) != 0 {
		t.Fatalf("at 1m50s the filter 1m3 still shows %v", got)
	}
	if v := later.View(); !strings.Contains(v, "0 of 3") {
		t.Fatalf("the title does not say 0 of 3:\n%s", v)
	}

	// A copy of m takes a snapshot with one more experiment whose purpose matches.
	st := f.state
	st.Snapshot.Experiments = append(slices.Clone(st.Snapshot.Experiments),
		engine.Receipt{ID: "exp_00000000000000000000new1", Status: engine.ExpSucceeded, Purpose: "rerun 1m3", WallSeconds: ptr(0.2)})
	other, _ := step(t, m, stateMsg{gen: m.dash.gen, state: st})
	if got := ids(other); !slices.Equal(got, []string{"exp_7414d181768254f796d579ab", "exp_00000000000000000000new1"}) {
		t.Fatalf("after the new snapshot the filter shows %v", got)
	}
	if got := ids(m); len(got) != 1 {
		t.Fatalf("the model that kept the old snapshot now shows %v", got)
	}
}

// TestFrameRendersRowsInView: a frame renders the rows of the window, not
// every row loaded; the pane still counts them all.
func TestFrameRendersRowsInView(t *testing.T) {
	t.Parallel()
	m := openDash(t, bigStudy(500), false, 120, 40)
	m = typeKeys(t, m, keyMsg("tab"))
	rendered := 0
	l := m.dash.experimentList(false)
	row := l.row
	l.row = func(i int) string { rendered++; return row(i) }
	out := m.dash.pane(paneExperiments, l, "header", 120, 15)
	if rendered > 15 || len(out) != 15 {
		t.Fatalf("a 15-line pane rendered %d rows (%d lines)", rendered, len(out))
	}
	if !strings.Contains(out[0], "1–13 of 500") {
		t.Fatalf("the title lost the position: %q", out[0])
	}
}
