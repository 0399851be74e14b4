package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// TestEachFormGetsAFreshCampaignFolder: the default folder is named when
// the form opens, not when the UI started, so a second launch works.
func TestEachFormGetsAFreshCampaignFolder(t *testing.T) {
	t.Parallel()
	clock := t0
	c := newCommon(fixture(), false)
	c.Clock = func() time.Time { return clock }
	m := NewModel(context.Background(), c, Start{Now: t0})
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	var dirs []string
	for range 2 {
		var cmd tea.Cmd
		m, cmd = step(t, m, keyMsg("n"))
		m = feed(t, m, cmd)
		dirs = append(dirs, m.form.inputs[fDir].Value())
		m, cmd = step(t, m, keyMsg("esc"))
		m = feed(t, m, cmd)
		clock = clock.Add(time.Minute)
	}
	if dirs[0] == dirs[1] || !strings.HasSuffix(dirs[0], "study-20260102-030405") {
		t.Fatalf("the two forms default to %q", dirs)
	}
	taken := map[string]bool{"/r/study-20260102-030405": true, "/r/study-20260102-030405-2": true}
	if got := freshDir("/r", t0, taken); got != "/r/study-20260102-030405-3" {
		t.Fatalf("freshDir beside two taken folders = %q", got)
	}
}

// TestFormEscAsksBeforeThrowingTextAway: esc leaves at once from an
// untouched form, and asks first once something was typed.
func TestFormEscAsksBeforeThrowingTextAway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		typed  string
		answer string
		home   bool
	}{
		{"untouched", "", "", true},
		{"typed, yes", "Euler", "y", true},
		{"typed, no", "Euler", "n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newFormModel(t, fixture(), "auto")
			if tc.typed != "" {
				m = typeText(t, m, tc.typed)
			}
			m, cmd := step(t, m, keyMsg("esc"))
			if tc.answer != "" {
				if !strings.Contains(m.View(), "Throw away what you typed?") || cmd != nil {
					t.Fatalf("esc after typing must ask:\n%s", m.View())
				}
				m, cmd = step(t, m, keyMsg(tc.answer))
			}
			m = feed(t, m, cmd)
			if (m.screen == screenHome) != tc.home {
				t.Fatalf("screen %d, want home %v", m.screen, tc.home)
			}
			if !tc.home && m.form.inputs[fHypothesis].Value() != tc.typed {
				t.Fatal("declining must keep the text")
			}
		})
	}
}

// TestReviewRefusesAMissingFile: a hypothesis file that cannot be read is
// refused before the review; one that can is shown there by its text.
func TestReviewRefusesAMissingFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		files  map[string]string
		screen screen
		want   string
	}{
		{"missing", nil, screenForm, "the hypothesis file cannot be used"},
		{"present", map[string]string{"/tmp/h.txt": "Leapfrog conserves energy."}, screenReview, "Leapfrog conserves energy. (file /tmp/h.txt)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fixture()
			f.files = tc.files
			m := newFormModel(t, f, "auto")
			m, _ = step(t, m, keyMsg("tab"))
			m = typeText(t, m, "/tmp/h.txt")
			m, _ = step(t, m, keyMsg("tab"))
			m = typeText(t, m, "Measure it.")
			m, cmd := step(t, m, keyMsg("ctrl+s"))
			m = feed(t, m, cmd)
			if m.screen != tc.screen || !strings.Contains(m.View(), tc.want) {
				t.Fatalf("screen %d, want %d with %q:\n%s", m.screen, tc.screen, tc.want, m.View())
			}
		})
	}
}

// TestReviewOffersNoLaunchForAnUnavailableBackend and shows the deadline
// as a time of day.
func TestReviewOffersNoLaunchForAnUnavailableBackend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		backend string
		launch  bool
	}{{"bubblewrap", true}, {"proot-cooperative", false}} {
		m := newReview(newCommon(fixture(), false), context.Background(), reviewMsg{
			study:  NewStudy{Dir: "/s", Hypothesis: "h", Request: engine.Request{ExecutionBackend: tc.backend, WallSeconds: 900}},
			probes: fixture().probes, now: t0})
		m, _ = m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		v := m.View()
		if strings.Contains(lastLine(v), "enter launch") != tc.launch {
			t.Errorf("%s: footer %q", tc.backend, lastLine(v))
		}
		if !strings.Contains(v, "03:19:05 UTC") || strings.Contains(v, "creation +") {
			t.Errorf("%s: the deadline must be a time of day:\n%s", tc.backend, v)
		}
	}
}

// TestHomeRefreshesItself: a home tick lists the studies again (one
// listing in flight at most); a tick of an older chain is ignored.
func TestHomeRefreshesItself(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := homeModelFor(t, f, 80, 24)
	m.c.Tick = time.Millisecond // the Cmds are inspected, never waited on
	gen := m.home.gen
	f.studies[0].Status = engine.StatusCompleted
	before := f.calls.Load()
	m, cmd := step(t, m, homeTickMsg{gen: gen})
	if cmd == nil || !m.home.loading {
		t.Fatal("a home tick must list the studies")
	}
	if _, again := step(t, m, homeTickMsg{gen: gen}); again == nil {
		t.Fatal("a tick while listing must re-arm the timer")
	}
	if stale, c := step(t, m, homeTickMsg{gen: gen - 1}); c != nil || stale.home.gen != gen {
		t.Fatal("a stale tick must be ignored")
	}
	msgs, _ := f.Studies(context.Background())
	m, _ = step(t, m, studiesMsg{studies: msgs})
	if f.calls.Load() == before || !strings.Contains(m.View(), "completed") || strings.Contains(m.View(), "running ●") {
		t.Fatalf("home after the refresh:\n%s", m.View())
	}
}

// TestReadOnlyHomeOffersNoStart: read-only home says so and lists no n or d.
func TestReadOnlyHomeOffersNoStart(t *testing.T) {
	t.Parallel()
	m := NewModel(context.Background(), newCommon(fixture(), true), Start{Now: t0})
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 120, Height: 24})
	m = feed(t, m, m.Init())
	v := m.View()
	if !strings.Contains(v, "[read-only]") || strings.Contains(lastLine(v), "n new") || strings.Contains(lastLine(v), "d demo") {
		t.Fatalf("read-only home:\n%s", v)
	}
}

// TestHomeAndFormUpdateDoNoIO: like the dashboard's, the home, form and
// review Updates only return Cmds.
func TestHomeAndFormUpdateDoNoIO(t *testing.T) {
	t.Parallel()
	f := fixture()
	home := homeModelFor(t, f, 80, 24)
	form := newFormModel(t, f, "auto")
	for _, tc := range []struct {
		name string
		m    Model
		msgs []tea.Msg
	}{
		{"home", home, []tea.Msg{homeTickMsg{gen: home.home.gen}, homeTickMsg{gen: 0}, keyMsg("?"), keyMsg("x"),
			keyMsg("j"), keyMsg("r"), keyMsg("n"), studiesMsg{}, keyMsg("enter")}},
		{"form", form, []tea.Msg{keyMsg("a"), tea.KeyMsg{Type: tea.KeyF1}, keyMsg("x"), keyMsg("tab"), keyMsg("esc"),
			keyMsg("n"), keyMsg("ctrl+s"), formErrMsg{err: "x"}, keyMsg("esc")}},
	} {
		before := f.calls.Load()
		m := tc.m
		for i, msg := range tc.msgs {
			m, _ = step(t, m, msg)
			_ = m.View()
			if got := f.calls.Load(); got != before {
				t.Fatalf("%s: message %d (%T) made %d engine call(s) inside Update", tc.name, i, msg, got-before)
			}
		}
	}
}
