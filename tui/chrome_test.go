package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// lastLine is the footer of a view.
func lastLine(view string) string {
	lines := strings.Split(view, "\n")
	return lines[len(lines)-1]
}

// TestFooterFitsAndShowsOnlyKeysThatAct: at every width the footer ends
// with `q quit`, never cut, and names no key that cannot act.
func TestFooterFitsAndShowsOnlyKeysThatAct(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		readOnly bool
		edit     func(*fakeEngine)
		want     []string
		absent   []string
	}{
		{"running", false, nil, []string{"p pause", "c cancel"}, []string{"r resume"}},
		{"read-only", true, nil, nil, []string{"p pause", "r resume", "c cancel"}},
		{"completed", false, func(f *fakeEngine) { f.state.Snapshot.Status = engine.StatusCompleted }, nil,
			[]string{"p pause", "r resume", "c cancel"}},
		{"paused attached", false, func(f *fakeEngine) {
			f.state.Snapshot.Status, f.state.Supervising = engine.StatusPaused, false
		}, []string{"r resume", "c cancel"}, []string{"p pause"}},
		{"bubblewrap", false, func(f *fakeEngine) { f.state.Snapshot.ExecutionBackend = "bubblewrap" }, nil,
			[]string{"w warning", "x dismiss"}},
	} {
		for _, w := range []int{80, 100, 120, 150, 200} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, w), func(t *testing.T) {
				t.Parallel()
				f := fixture()
				if tc.edit != nil {
					tc.edit(f)
				}
				m := openDash(t, f, tc.readOnly, w, 30)
				m, _ = step(t, m, keyMsg("x"))
				bar := lastLine(m.View())
				assertFits(t, m.View(), w, 30)
				if !strings.HasSuffix(strings.TrimRight(bar, " "), "q quit") {
					t.Errorf("footer does not end with q quit: %q", bar)
				}
				for _, s := range tc.want {
					if w >= 120 && !strings.Contains(bar, s) {
						t.Errorf("footer lacks %q: %q", s, bar)
					}
				}
				for _, s := range tc.absent {
					if strings.Contains(bar, s) {
						t.Errorf("footer offers %q, which cannot act: %q", s, bar)
					}
				}
			})
		}
	}
}

// TestInterruptedStudyShowsNoRunningExperiment: a running receipt of a
// study no live supervisor owns is shown interrupted, its wall time frozen.
func TestInterruptedStudyShowsNoRunningExperiment(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.state.Snapshot.Status, f.state.Supervising = engine.StatusInterrupted, false
	m := openDash(t, f, false, 120, 40)
	before := m.View()
	m, _ = step(t, m, tickMsg{gen: m.dash.gen, now: t0.Add(30e9)})
	after := m.View()
	for _, v := range []string{before, after} {
		row := lineWith(v, "exp_7414d181")
		if strings.Contains(row, "running") || !strings.Contains(row, "interrupted") {
			t.Fatalf("the dead experiment's row: %q", row)
		}
	}
	if lineWith(before, "exp_7414d181") != lineWith(after, "exp_7414d181") {
		t.Fatal("the interrupted experiment's row changed with the clock")
	}
	if h := lineWith(before, "STATUS"); strings.Index(h, "BACKEND") != strings.Index(lineWith(before, "exp_7414d181"), "proot") {
		t.Fatalf("the BACKEND column is not aligned:\n%s\n%s", h, lineWith(before, "exp_7414d181"))
	}
}

func lineWith(view, s string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestRunningDetailShowsLiveWall: the detail of a running experiment shows
// the same live wall time as the list.
func TestRunningDetailShowsLiveWall(t *testing.T) {
	t.Parallel()
	m := openDash(t, fixture(), false, 100, 30)
	m, _ = step(t, m, keyMsg("x"))
	m, _ = step(t, m, keyMsg("tab")) // the running experiment is listed first
	// enter on a running experiment opens its live output (the log
	// viewer); its detail, reached before it ran or after, is this one.
	v := strings.Join(m.dash.experimentDetail(m.dash.experimentOrder()[m.dash.sel[paneExperiments]], 100), "\n")
	if !strings.Contains(v, "1m30s so far") || strings.Contains(v, "wall time    unknown") {
		t.Fatalf("running experiment detail:\n%s", v)
	}
}

// TestDetailScrollStopsAtItsEnd: scrolling past the end keeps the last
// page full; g, G, pgup and pgdown move; the position line says where.
func TestDetailScrollStopsAtItsEnd(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.state.Snapshot.Experiments[0].StdoutTail = strings.Repeat("a line of output\n", 60)
	m := openDash(t, f, false, 80, 24)
	m, _ = step(t, m, keyMsg("x"))
	m, _ = step(t, m, keyMsg("tab"))
	m, _ = step(t, m, keyMsg("j")) // the finished experiment is last
	m, _ = step(t, m, keyMsg("j"))
	m, _ = step(t, m, keyMsg("enter"))
	total := len(m.dash.detailLines(m.dash.mainWidth()))
	end := m.dash.maxDetailScroll()
	for _, tc := range []struct {
		keys []tea.KeyMsg
		want int
	}{
		{[]tea.KeyMsg{keyMsg("j")}, 1},
		{repeat(keyMsg("j"), 200), end},
		{[]tea.KeyMsg{keyMsg("g")}, 0},
		{[]tea.KeyMsg{keyMsg("G")}, end},
		{[]tea.KeyMsg{{Type: tea.KeyHome}}, 0},
		{[]tea.KeyMsg{{Type: tea.KeyPgDown}}, m.dash.bodyHeight() - 2},
		{[]tea.KeyMsg{{Type: tea.KeyEnd}, {Type: tea.KeyPgUp}}, end - (m.dash.bodyHeight() - 2)},
	} {
		for _, k := range tc.keys {
			m, _ = step(t, m, k)
		}
		if m.dash.detailScroll != tc.want {
			t.Errorf("after %v scroll = %d, want %d", tc.keys, m.dash.detailScroll, tc.want)
		}
	}
	m, _ = step(t, m, keyMsg("G"))
	v := m.View()
	if !strings.Contains(v, fmt.Sprintf("of %d · 100%%", total)) || !strings.Contains(v, "Traceback") && !strings.Contains(v, "a line of output") {
		t.Fatalf("at the end the view must be full and say so:\n%s", v)
	}
	assertFits(t, v, 80, 24)
}

func repeat(k tea.KeyMsg, n int) []tea.KeyMsg {
	out := make([]tea.KeyMsg, n)
	for i := range out {
		out[i] = k
	}
	return out
}

// TestActivityKeepsItsSelectionOnItsEvent: new events do not move the
// selected event; at the top, the pane follows the newest.
func TestActivityKeepsItsSelectionOnItsEvent(t *testing.T) {
	t.Parallel()
	m := openDash(t, fixture(), false, 100, 30)
	for m.dash.focus != paneEvents {
		m, _ = step(t, m, keyMsg("tab"))
	}
	m, _ = step(t, m, keyMsg("j"))
	selected := func(m Model) int64 { return m.dash.events[len(m.dash.events)-1-m.dash.sel[paneEvents]].Seq }
	want := selected(m)
	m, _ = step(t, m, eventsMsg{gen: m.dash.gen, events: []engine.Event{event(60, "activity", nil), event(61, "activity", nil)}})
	if got := selected(m); got != want {
		t.Fatalf("after new events the selection moved from event %d to %d", want, got)
	}
	m, _ = step(t, m, keyMsg("g"))
	for m.dash.sel[paneEvents] > 0 {
		m, _ = step(t, m, keyMsg("k"))
	}
	m, _ = step(t, m, eventsMsg{gen: m.dash.gen, events: []engine.Event{event(62, "activity", nil)}})
	if got := selected(m); got != 62 {
		t.Fatalf("at the top Activity must follow the newest event, selects %d", got)
	}
}

// TestStudyPaneMessages: a long attention message wraps, enter on the
// Study pane shows it whole, a finished study counts nothing down, and a
// paused study's provider line says it is paused.
func TestStudyPaneMessages(t *testing.T) {
	t.Parallel()
	long := "the provider refused the credentials (HTTP 401: invalid api key); fix the connection file and resume the study; tail-word"
	f := fixture()
	f.state.Snapshot.Provider = engine.ProviderState{RetryCount: 7, WaitSeconds: 182, Attention: &long}
	f.state.Snapshot.Status = engine.StatusPausedExternalError
	m := openDash(t, f, false, 80, 24)
	m, _ = step(t, m, keyMsg("x"))
	if v := m.View(); !strings.Contains(v, "fix the connection") {
		t.Errorf("the attention message must wrap, not be cut:\n%s", v)
	}
	m, _ = step(t, m, keyMsg("shift+tab"))
	m, _ = step(t, m, keyMsg("enter"))
	if v := m.View(); !m.dash.detail || !strings.Contains(v, "tail-word") {
		t.Errorf("enter on Study must show the message whole:\n%s", v)
	}
	f = fixture()
	f.state.Snapshot.Status, f.state.Snapshot.Provider = engine.StatusPaused, engine.ProviderState{RetryCount: 7, WaitSeconds: 182}
	if got := openDash(t, f, false, 80, 24).dash.providerLine(); got != "paused · 7 retries, 182 s waited" {
		t.Errorf("paused provider line = %q", got)
	}
	m.dash = m.dash.say("could not resume: /work/studies/kepler/a/long/folder: another supervisor owns this study")
	if v := m.View(); !strings.Contains(v, "owns this study") || !strings.HasSuffix(strings.TrimSpace(lastLine(v)), "esc close") {
		t.Errorf("a long message must wrap above the footer, which keeps its keys:\n%s", v)
	}
	assertFits(t, m.View(), 80, 24)
	f = fixture()
	f.state.Snapshot.Status = engine.StatusCompleted
	if v := openDash(t, f, false, 120, 40).View(); strings.Contains(v, "left") {
		t.Errorf("a completed study must not count down:\n%s", v)
	}
}

// TestEmptyPaneHasNoSelectionMarker: the empty-state text is not a row.
func TestEmptyPaneHasNoSelectionMarker(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.state.Snapshot.Reviews = nil
	m := openDash(t, f, false, 100, 30)
	for m.dash.focus != paneReviews {
		m, _ = step(t, m, keyMsg("tab"))
	}
	if l := lineWith(m.View(), "no reviews yet"); strings.Contains(l, "›") {
		t.Fatalf("the empty state is marked selected: %q", l)
	}
}

// TestHelpOverlayOnEveryScreen: ? (or f1 in the form's text fields) opens
// an overlay of the screen's active keys; any key closes it.
func TestHelpOverlayOnEveryScreen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		model func(t *testing.T) Model
		open  tea.KeyMsg
		want  []string
	}{
		{"home", func(t *testing.T) Model { return homeModelFor(t, fixture(), 80, 24) }, keyMsg("?"), []string{"Keys: home", "new study", "refresh"}},
		{"form", func(t *testing.T) Model { return newFormModel(t, fixture(), "auto") }, tea.KeyMsg{Type: tea.KeyF1}, []string{"Keys: new study", "ctrl+s"}},
		{"dashboard", func(t *testing.T) Model { return openDash(t, fixture(), false, 80, 24) }, keyMsg("?"), []string{"Keys: dashboard", "pause"}},
		{"detail", func(t *testing.T) Model {
			m := openDash(t, fixture(), false, 80, 24)
			m, _ = step(t, m, keyMsg("enter"))
			return m
		}, keyMsg("?"), []string{"Keys: detail view", "pgup/pgdn"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := tc.model(t)
			m, _ = step(t, m, tc.open)
			v := m.View()
			for _, s := range tc.want {
				if !strings.Contains(v, s) {
					t.Errorf("help lacks %q:\n%s", s, v)
				}
			}
			assertFits(t, v, 80, 24)
			m, _ = step(t, m, keyMsg("z"))
			if strings.Contains(m.View(), "any key closes") {
				t.Error("a key must close the help")
			}
		})
	}
}

// TestGoldenChrome: the interrupted dashboard, home's help and the
// detail's position line, at two sizes each.
func TestGoldenChrome(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			t.Parallel()
			f := fixture()
			f.state.Snapshot.Status, f.state.Supervising = engine.StatusInterrupted, false
			d, _ := step(t, openDash(t, f, false, w, h), keyMsg("x"))
			golden(t, fmt.Sprintf("dashboard_interrupted_%dx%d", w, h), d.View())
			home, _ := step(t, homeModelFor(t, fixture(), w, h), keyMsg("?"))
			golden(t, fmt.Sprintf("home_help_%dx%d", w, h), home.View())
			for _, v := range []string{d.View(), home.View()} {
				assertFits(t, v, w, h)
			}
		})
	}
}

// TestLeaveQuestionEndsWhenTheSupervisorStops: q asked whether to pause
// and leave; the study stopped by itself meanwhile, so the UI leaves.
func TestLeaveQuestionEndsWhenTheSupervisorStops(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, false, 80, 24)
	m, _ = step(t, m, keyMsg("q"))
	if m.dash.confirm != "leave" {
		t.Fatal("q while supervising must ask")
	}
	st := f.state
	st.Supervising, st.Snapshot.Status = false, engine.StatusCompleted
	m, cmd := step(t, m, stateMsg{gen: m.dash.gen, state: st})
	if msgs := run(cmd); m.dash.confirm != "" || len(msgs) != 1 || msgs[0] != (leftMsg{gen: m.dash.gen}) {
		t.Fatalf("after the supervisor stopped: confirm %q, msgs %v", m.dash.confirm, msgs)
	}
}
