package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func homeModelFor(t *testing.T, f *fakeEngine, w, h int) Model {
	t.Helper()
	m := NewModel(context.Background(), newCommon(f, false), Start{Now: t0})
	m, _ = step(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	return feed(t, m, m.Init())
}

func TestHomeListsAndOpens(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := homeModelFor(t, f, 80, 24)
	golden(t, "home_80x24", m.View())
	assertFits(t, m.View(), 80, 24)
	m, _ = step(t, m, keyMsg("j"))
	_, cmd := step(t, m, keyMsg("enter"))
	msgs := run(cmd)
	if len(msgs) != 1 || msgs[0] != (openStudyMsg{dir: "/work/studies/demo-1"}) {
		t.Fatalf("enter on the second study = %v", msgs)
	}
	_, cmd = step(t, m, keyMsg("d"))
	msgs = run(cmd)
	if len(msgs) != 1 || msgs[0] != (demoMsg{dir: "/work/studies/demo"}) {
		t.Fatalf("d = %v", msgs)
	}
	_, cmd = step(t, m, keyMsg("q"))
	if run(cmd)[0] != (quitMsg{}) {
		t.Fatal("q on home must quit")
	}
}

func TestHomeOpenThenLeaveReturnsHome(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.state.Supervising = false
	m := homeModelFor(t, f, 80, 24)
	m, cmd := step(t, m, openStudyMsg{dir: "/work/studies/kepler"})
	m = feed(t, m, cmd)
	if m.screen != screenDash || !m.dash.loaded {
		t.Fatal("openStudyMsg must show the loaded dashboard")
	}
	m, cmd = step(t, m, keyMsg("q"))
	m = feed(t, m, cmd)
	if m.screen != screenHome {
		t.Fatal("q on a dashboard opened from home must go back home")
	}
}

func newFormModel(t *testing.T, f *fakeEngine, def string) Model {
	t.Helper()
	c := newCommon(f, false)
	c.DefaultBackend = def
	m := NewModel(context.Background(), c, Start{Now: t0})
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m, cmd := step(t, m, keyMsg("n"))
	m = feed(t, m, cmd)
	return m
}

func typeText(t *testing.T, m Model, s string) Model {
	t.Helper()
	m, _ = step(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)})
	return m
}

func TestNewStudyFormAndReview(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := newFormModel(t, f, "auto")
	if m.screen != screenForm || m.form.backend != 0 {
		t.Fatalf("the form must open with Auto preselected (screen %d, backend %d)", m.screen, m.form.backend)
	}
	golden(t, "newstudy_80x24", m.View())
	m, _ = step(t, m, keyMsg("ctrl+s"))
	if !strings.Contains(m.View(), "type a hypothesis") {
		t.Fatal("an empty hypothesis must be refused")
	}
	m = typeText(t, m, "Euler conserves energy.")
	m, _ = step(t, m, keyMsg("tab"))
	m, _ = step(t, m, keyMsg("tab"))
	m = typeText(t, m, "Measure it.")
	for m.form.focus != fBackend {
		m, _ = step(t, m, keyMsg("tab"))
	}
	m, _ = step(t, m, tea.KeyMsg{Type: tea.KeyRight})
	m, _ = step(t, m, tea.KeyMsg{Type: tea.KeyRight})
	m, cmd := step(t, m, keyMsg("ctrl+s"))
	m = feed(t, m, cmd)
	if m.screen != screenReview {
		t.Fatalf("ctrl+s with a complete form must show the review (screen %d, err %q)", m.screen, m.form.err)
	}
	golden(t, "review_80x24", m.View())
	m, _ = step(t, m, keyMsg("enter"))
	if !strings.Contains(m.View(), "cannot launch") {
		t.Fatal("launching an unavailable backend must be refused on the review screen")
	}
	m, cmd = step(t, m, keyMsg("esc"))
	m = feed(t, m, cmd)
	m, _ = step(t, m, tea.KeyMsg{Type: tea.KeyLeft})
	m, cmd = step(t, m, keyMsg("ctrl+s"))
	m = feed(t, m, cmd)
	m, cmd = step(t, m, keyMsg("enter"))
	m = feed(t, m, cmd)
	if len(f.created) != 1 || f.created[0].Request.ExecutionBackend != "bubblewrap" || m.screen != screenDash {
		t.Fatalf("launch: created %+v, screen %d", f.created, m.screen)
	}
}

func TestNativeNeverPreselected(t *testing.T) {
	t.Parallel()
	for def, want := range map[string]int{"process-cooperative": 0, "proot-cooperative": 2, "bubblewrap": 1} {
		if got := newFormModel(t, fixture(), def).form.backend; got != want {
			t.Errorf("default %s preselects choice %d, want %d", def, got, want)
		}
	}
}
