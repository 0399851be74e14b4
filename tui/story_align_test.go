package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestClaimCountsAlign: a claim row with no verdict keeps the verdict
// column's blank, so every row's "N exp" ends in the same cell, at every
// width, and a narrow pane drops the verdict before the count.
func TestClaimCountsAlign(t *testing.T) {
	t.Parallel()
	m := openStory(t, storyFixture(), 200, 60).dash
	cases := []struct {
		w             int
		count, verdct bool
	}{{100, true, true}, {76, true, true}, {52, true, false}, {40, true, false}, {22, false, false}}
	for _, c := range cases {
		rows := m.claimRows(c.w)
		ends := map[int]bool{}
		for _, r := range rows {
			r = ansi.Strip(r)
			if i := strings.Index(r, " exp"); i >= 0 {
				ends[ansi.StringWidth(r[:i])] = true
			}
			if got := strings.Contains(r, " exp"); got != c.count {
				t.Errorf("w %d: row %q shows the count: %v, want %v", c.w, r, got, c.count)
			}
			if w := ansi.StringWidth(r); w > c.w-2 {
				t.Errorf("w %d: row %q is %d cells", c.w, r, w)
			}
		}
		if len(ends) > 1 {
			t.Errorf("w %d: the counts end in different cells %v:\n%s", c.w, ends, strings.Join(rows, "\n"))
		}
		if got := strings.Contains(strings.Join(rows, "\n"), "(approved)"); got != c.verdct {
			t.Errorf("w %d: a verdict shows: %v, want %v", c.w, got, c.verdct)
		}
	}
}
