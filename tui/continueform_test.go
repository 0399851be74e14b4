package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// finished is the fixture, completed and supervised by nobody, with a
// continuation draft.
func finished() *fakeEngine {
	f := fixture()
	f.state.Snapshot.Status, f.state.Supervising = engine.StatusCompleted, false
	parent := "/work/studies/kepler"
	f.draft = engine.ContinuationDraft{Parent: parent, Request: engine.Request{Mode: "minimal", AgentBackend: "command",
		Model: "local", Executable: "/usr/local/bin/agent", ExecutionBackend: "bubblewrap", CompletionPolicy: "answer",
		WallSeconds: 3600, TurnSeconds: 120, ContinueFrom: parent},
		Files: []engine.InheritCandidate{
			{Path: ".secret", Bytes: 7, Refused: "is hidden (a part starts with a dot); hidden files are never inherited"},
			{Path: "big.bin", Bytes: 2 << 20, Refused: "is larger than 1048576 bytes (1 MiB)"},
			{Path: "notes.md", Bytes: 24}, {Path: "sub/data.csv", Bytes: 1536},
		}}
	return f
}

func hasKey(hs []hint, k string) bool {
	return slices.ContainsFunc(hs, func(h hint) bool { return h.key == k })
}

// `C` shows in the footer and acts only on a finished (or out-of-budget)
// study, never in read-only.
func TestContinueOfferedOnlyWhenItCanAct(t *testing.T) {
	t.Parallel()
	pastDeadline := fixture()
	pastDeadline.state.Snapshot.Status, pastDeadline.state.Supervising = engine.StatusPaused, false
	pastDeadline.state.Snapshot.Deadline = t0.Add(-1)
	for _, tc := range []struct {
		name     string
		f        *fakeEngine
		readOnly bool
		want     bool
	}{
		{"running", fixture(), false, false},
		{"completed", finished(), false, true},
		{"paused past its deadline", pastDeadline, false, true},
		{"completed, read-only", finished(), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := openDash(t, tc.f, tc.readOnly, 120, 40)
			if got := hasKey(m.dash.hints(), "C"); got != tc.want {
				t.Fatalf("footer offers C: %v; want %v (%v)", got, tc.want, m.dash.hints())
			}
			before := tc.f.calls.Load()
			m, cmd := step(t, m, keyMsg("C"))
			if tc.f.calls.Load() != before {
				t.Fatal("C made an engine call inside Update")
			}
			if m = feed(t, m, cmd); (m.screen == screenForm) != tc.want {
				t.Fatalf("after C the screen is %v; want the form: %v\n%s", m.screen, tc.want, m.View())
			}
		})
	}
}

// The continuation form is prefilled from the parent, lists the files it
// may inherit with their sizes and the refused ones with the reason, and
// creates the child through Workspace.Create with ContinueFrom and the
// files picked; the hypothesis stays the parent's when none is typed.
func TestContinueFormCreatesTheChild(t *testing.T) {
	t.Parallel()
	f := finished()
	f.files = map[string]string{"/tmp/next.md": "go on with n up to 10^6"}
	m := openDash(t, f, false, 100, 30)
	m, cmd := step(t, m, keyMsg("C"))
	m = feed(t, m, cmd)
	m, _ = step(t, m, keyMsg("down"))
	m, _ = step(t, m, keyMsg(" ")) // sub/data.csv
	golden(t, "continue_form_100x30", m.View())
	assertFits(t, m.View(), 100, 30)
	for _, want := range []string{"Continue from   /work/studies/kepler", "[ ] notes.md  24B", "[x] sub/data.csv  2K",
		"refused big.bin: is larger than", "‹ command ›", "/usr/local/bin/agent"} {
		if !strings.Contains(m.View(), want) {
			t.Errorf("the continuation form lacks %q", want)
		}
	}
	for range 4 { // picker → hypothesis → its file → instructions → its file
		m, _ = step(t, m, keyMsg("tab"))
	}
	m = typeRunes(t, m, f, "/tmp/next.md")
	m, cmd = step(t, m, keyMsg("ctrl+s"))
	m = feed(t, m, cmd)
	if m.screen != screenReview {
		t.Fatalf("ctrl+s did not reach the review: %s\n%s", m.form.err, m.View())
	}
	golden(t, "continue_review_100x30", m.View())
	m, cmd = step(t, m, keyMsg("enter"))
	m = feed(t, m, cmd)
	if len(f.created) != 1 {
		t.Fatalf("created %d studies; want 1", len(f.created))
	}
	r := f.created[0].Request
	if r.ContinueFrom != "/work/studies/kepler" || !slices.Equal(r.InheritFiles, []string{"sub/data.csv"}) ||
		f.created[0].Hypothesis != "" || f.created[0].HypothesisFile != "" || r.AgentBackend != "command" ||
		r.Executable != "/usr/local/bin/agent" || r.TurnSeconds != 120 || r.CompletionPolicy != "answer" {
		t.Fatalf("created %+v; want the parent's continuation with sub/data.csv", f.created[0])
	}
	if m.screen != screenDash {
		t.Fatalf("after creating, the screen is %v; want the child's dashboard", m.screen)
	}
}

// At 80×24 the continuation form does not fit: it shows a window around
// the focused field, so the picker and the campaign folder are both
// reachable, and it keeps the terminal's size.
func TestContinueFormScrollsAt80x24(t *testing.T) {
	t.Parallel()
	f := finished()
	m := openDash(t, f, false, 80, 24)
	m, cmd := step(t, m, keyMsg("C"))
	m = feed(t, m, cmd)
	golden(t, "continue_form_80x24", m.View())
	assertFits(t, m.View(), 80, 24)
	if v := m.View(); !strings.Contains(v, "› [ ] notes.md") {
		t.Fatalf("the picker is not in view:\n%s", v)
	}
	m, _ = step(t, m, keyMsg("shift+tab"))
	if v := m.View(); m.form.focus != fDir || !strings.Contains(v, "▶ Campaign folder") {
		t.Fatalf("shift+tab from the picker: focus %d; the campaign folder is not in view:\n%s", m.form.focus, v)
	}
	assertFits(t, m.View(), 80, 24)
}
