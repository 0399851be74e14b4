package tui

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// docKeys are the (screen, key) rows of docs/tui.md's "Keys per screen".
func docKeys(t *testing.T) map[string]map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/tui.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| ([A-Za-z ]+) \\| `([^`]+)` \\|")
	out := map[string]map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			if out[m[1]] == nil {
				out[m[1]] = map[string]bool{}
			}
			out[m[1]][m[2]] = true
		}
	}
	return out
}

// TestDocListsEveryKey holds docs/tui.md to the keymaps: every key a
// screen's footer and `?` overlay can offer has its row in the doc.
func TestDocListsEveryKey(t *testing.T) {
	t.Parallel()
	doc := docKeys(t)
	paused := fixture()
	paused.state.Snapshot.Status, paused.state.Supervising = engine.StatusPaused, false
	dash := openDash(t, fixture(), false, 120, 40)
	dismissed, _ := step(t, dash, keyMsg("x"))
	detail, _ := step(t, dash, keyMsg("enter"))
	form := newFormModel(t, fixture(), "auto")
	choice := form
	for choice.form.focus != fAgent {
		choice, _ = step(t, choice, keyMsg("tab"))
	}
	review := newReview(newCommon(fixture(), false), context.Background(), reviewMsg{study: NewStudy{Request: engine.Request{ExecutionBackend: "bubblewrap"}}})
	offered := map[string][]hint{
		"Home":      homeModelFor(t, fixture(), 80, 24).home.hints(),
		"New study": append(form.form.hints(), choice.form.hints()...),
		"Review":    review.hints(),
		"Dashboard": append(append(dash.dash.hints(), dismissed.dash.hints()...), openDash(t, paused, false, 120, 40).dash.hints()...),
		"Detail":    detail.dash.hints(),
	}
	steering, _ := step(t, dash, keyMsg("s"))
	continuing, cmd := step(t, openDash(t, finished(), false, 120, 40), keyMsg("C"))
	continuing = feed(t, continuing, cmd)
	offered["Steering"] = steering.dash.hints()
	offered["Dashboard"] = append(offered["Dashboard"], openDash(t, finished(), false, 120, 40).dash.hints()...)
	offered["New study"] = append(offered["New study"], continuing.form.hints()...)
	for screen, hs := range offered {
		for _, h := range hs {
			if !doc[screen][h.key] {
				t.Errorf("docs/tui.md has no row | %s | `%s` | (%s)", screen, h.key, h.desc)
			}
		}
	}
	if len(doc) != len(offered) {
		t.Errorf("the doc lists keys of %d screens, the test knows %d", len(doc), len(offered))
	}
}
