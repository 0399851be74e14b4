package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// manyExperiments is the fixture with 40 experiments whose purposes are
// case-0 … case-39, oldest first.
func manyExperiments() *fakeEngine {
	f := fixture()
	exps := make([]engine.Receipt, 40)
	for i := range exps {
		exps[i] = engine.Receipt{ID: fmt.Sprintf("exp_c%02d%s", i, strings.Repeat("f", 21)), Status: engine.ExpSucceeded,
			IsolationBackend: "bubblewrap", Purpose: fmt.Sprintf("case-%d", i), WallSeconds: ptr(0.05)}
	}
	f.state.Snapshot.Experiments = exps
	return f
}

func typeKeys(t *testing.T, m Model, keys ...tea.KeyMsg) Model {
	t.Helper()
	for _, k := range keys {
		m, _ = step(t, m, k)
	}
	return m
}

func typed(s string) []tea.KeyMsg {
	var out []tea.KeyMsg
	for _, r := range s {
		out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	return out
}

var backspace = tea.KeyMsg{Type: tea.KeyBackspace}

// purposes are the purposes of the experiments the pane shows, in order.
func purposes(m dashModel) []string {
	var out []string
	exps := m.experimentOrder()
	for _, i := range m.shown(paneExperiments) {
		out = append(out, exps[i].Purpose)
	}
	return out
}

// TestFilterNarrowsKeepsClearsAndRecalls: `/` then typing narrows the
// Experiments pane to the rows whose text or purpose holds the query
// (case-insensitive); enter keeps it, esc clears it, `/` recalls it.
func TestFilterNarrowsKeepsClearsAndRecalls(t *testing.T) {
	t.Parallel()
	// finished experiments are listed newest first (the fixture adds case-0 first)
	want3 := "case-39 case-38 case-37 case-36 case-35 case-34 case-33 case-32 case-31 case-30 case-3"
	cases := []struct {
		name    string
		keys    []tea.KeyMsg
		shown   string // the purposes shown; "all" when the filter is off
		title   string
		editing bool
	}{
		{"typing narrows", append([]tea.KeyMsg{keyMsg("/")}, typed("case-3")...), want3, "/case-3▏ · 11 of 40", true},
		{"case-insensitive", append([]tea.KeyMsg{keyMsg("/")}, typed("CASE-3")...), want3, "/CASE-3▏ · 11 of 40", true},
		{"by id", append([]tea.KeyMsg{keyMsg("/")}, typed("EXP_C39")...), "case-39", "1 of 40", true},
		{"backspace widens", append(append([]tea.KeyMsg{keyMsg("/")}, typed("case-39")...), backspace), want3, "11 of 40", true},
		{"enter keeps", append(append([]tea.KeyMsg{keyMsg("/")}, typed("case-3")...), keyMsg("enter")), want3, "/case-3 · 11 of 40", false},
		{"esc clears", append(append([]tea.KeyMsg{keyMsg("/")}, typed("case-3")...), keyMsg("esc")), "all", "Experiments (40)", false},
		{"esc after enter clears", append(append([]tea.KeyMsg{keyMsg("/")}, typed("case-3")...), keyMsg("enter"), keyMsg("esc")), "all", "Experiments (40)", false},
		{"/ recalls", append(append([]tea.KeyMsg{keyMsg("/")}, typed("case-3")...), keyMsg("esc"), keyMsg("/")), want3, "/case-3▏ · 11 of 40", true},
		{"no match", append([]tea.KeyMsg{keyMsg("/")}, typed("zzz")...), "", "0 of 40", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := openDash(t, manyExperiments(), false, 100, 40)
			m = typeKeys(t, m, keyMsg("tab")) // Claims → Experiments
			m = typeKeys(t, m, c.keys...)
			got := strings.Join(purposes(m.dash), " ")
			if m.dash.shown(paneExperiments) == nil {
				got = "all"
			}
			if got != c.shown {
				t.Errorf("shown %q, want %q", got, c.shown)
			}
			if m.dash.filters[paneExperiments].editing != c.editing {
				t.Errorf("editing = %v, want %v", !c.editing, c.editing)
			}
			if v := m.View(); !strings.Contains(v, c.title) {
				t.Errorf("the view has no %q:\n%s", c.title, v)
			}
		})
	}
}

// TestFilterTypesKeysThatActElsewhere: while the prompt is open, q, p and
// j are text, not quit, pause and down.
func TestFilterTypesKeysThatActElsewhere(t *testing.T) {
	t.Parallel()
	f := manyExperiments()
	m := openDash(t, f, false, 100, 40)
	m = typeKeys(t, m, keyMsg("tab"), keyMsg("/"))
	for _, k := range []string{"q", "p", "j", "c"} {
		var cmd tea.Cmd
		m, cmd = step(t, m, keyMsg(k))
		if cmd != nil || m.dash.confirm != "" {
			t.Fatalf("%q in the prompt acted (cmd %v, confirm %q)", k, cmd != nil, m.dash.confirm)
		}
	}
	if q := m.dash.filters[paneExperiments].query; q != "qpjc" {
		t.Fatalf("query = %q, want qpjc", q)
	}
	if len(f.controls) != 0 {
		t.Fatalf("controls sent: %v", f.controls)
	}
}

// TestFilterSelectionStaysOnShownRows: the selection moves among the rows
// the filter shows, and enter opens the shown row's detail.
func TestFilterSelectionStaysOnShownRows(t *testing.T) {
	t.Parallel()
	m := openDash(t, manyExperiments(), false, 100, 40)
	m = typeKeys(t, m, keyMsg("tab"), keyMsg("/"))
	m = typeKeys(t, m, typed("case-3")...)
	m = typeKeys(t, m, keyMsg("down"), keyMsg("enter"), keyMsg("j"))
	exps := m.dash.experimentOrder()
	sel := exps[m.dash.sel[paneExperiments]]
	if sel.Purpose != "case-37" {
		t.Fatalf("after ↓ in the prompt and j: %s selected, want case-37 (the third shown, newest first)", sel.Purpose)
	}
	m = typeKeys(t, m, keyMsg("enter"))
	if !m.dash.detail || !strings.Contains(m.View(), "case-37") && !strings.Contains(m.View(), sel.ID) {
		t.Fatalf("enter did not open the detail of the shown row:\n%s", m.View())
	}
}

// TestFilterUpdateDoesNoIO: the filter's keys never call the engine.
func TestFilterUpdateDoesNoIO(t *testing.T) {
	t.Parallel()
	f := manyExperiments()
	m := openDash(t, f, false, 80, 24)
	keys := append([]tea.KeyMsg{keyMsg("tab"), keyMsg("/")}, typed("case-3")...)
	keys = append(keys, backspace, keyMsg("down"), keyMsg("enter"), keyMsg("j"), keyMsg("esc"), keyMsg("/"),
		keyMsg("esc"), keyMsg("tab"), keyMsg("/"), keyMsg("x"), keyMsg("enter"), keyMsg("enter"))
	before := f.calls.Load()
	for i, k := range keys {
		m, _ = step(t, m, k)
		_ = m.View()
		if got := f.calls.Load(); got != before {
			t.Fatalf("key %d (%v) made %d engine call(s) inside Update", i, k, got-before)
		}
	}
	h := homeModelFor(t, f, 80, 24)
	before = f.calls.Load()
	for i, k := range append(append([]tea.KeyMsg{keyMsg("/")}, typed("demo")...), keyMsg("enter"), keyMsg("esc"), keyMsg("/")) {
		h, _ = step(t, h, k)
		_ = h.View()
		if got := f.calls.Load(); got != before {
			t.Fatalf("home key %d (%v) made %d engine call(s) inside Update", i, k, got-before)
		}
	}
}

// TestHomeFilter: the home list narrows to the matching studies, enter
// opens the one selected among them, esc clears and `/` recalls.
func TestHomeFilter(t *testing.T) {
	t.Parallel()
	m := homeModelFor(t, fixture(), 80, 24)
	m = typeKeys(t, m, keyMsg("/"))
	m = typeKeys(t, m, typed("DEMO")...)
	v := m.View()
	if strings.Contains(v, "kepler") || !strings.Contains(v, "demo-1") || !strings.Contains(v, "1 of 2") {
		t.Fatalf("the filter /DEMO shows:\n%s", v)
	}
	m, cmd := step(t, m, keyMsg("enter"))
	if cmd != nil || m.home.filter.editing {
		t.Fatal("enter in the prompt must keep the filter, not open a study")
	}
	_, cmd = step(t, m, keyMsg("enter"))
	if msgs := run(cmd); len(msgs) != 1 || msgs[0].(openStudyMsg).dir != m.home.studies[m.home.sel].Dir || !strings.Contains(msgs[0].(openStudyMsg).dir, "demo") {
		t.Fatalf("enter opened %v, want the demo", msgs)
	}
	m = typeKeys(t, m, keyMsg("esc"))
	if m.home.filter.on() || !strings.Contains(m.View(), "kepler") {
		t.Fatal("esc did not clear the filter")
	}
	m = typeKeys(t, m, keyMsg("/"))
	if m.home.filter.query != "DEMO" {
		t.Fatalf("/ recalled %q, want DEMO", m.home.filter.query)
	}
}

func TestPosition(t *testing.T) {
	t.Parallel()
	cases := []struct {
		sel, n, h int
		want      string
	}{
		{0, 5, 8, ""}, {0, 40, 8, "1–8 of 40"}, {15, 40, 8, "9–16 of 40"}, {39, 40, 8, "33–40 of 40"}, {0, 3, 0, ""},
	}
	for _, c := range cases {
		if got := position(c.sel, c.n, c.h); got != c.want {
			t.Errorf("position(%d, %d, %d) = %q, want %q", c.sel, c.n, c.h, got, c.want)
		}
	}
}

// TestGoldenFiltered: the Experiments pane filtered to /case-3, and the
// position indicator of a long list.
func TestGoldenFiltered(t *testing.T) {
	t.Parallel()
	m := openDash(t, manyExperiments(), false, 80, 24)
	m = typeKeys(t, m, keyMsg("x"), keyMsg("tab"))
	long := typeKeys(t, m, keyMsg("j"), keyMsg("j"))
	golden(t, "dashboard_long_80x24", long.View())
	m = typeKeys(t, m, keyMsg("/"))
	m = typeKeys(t, m, typed("case-3")...)
	golden(t, "dashboard_filtering_80x24", m.View())
	m = typeKeys(t, m, keyMsg("enter"))
	golden(t, "dashboard_filtered_80x24", m.View())
	h := homeModelFor(t, fixture(), 80, 24)
	h = typeKeys(t, h, keyMsg("/"))
	h = typeKeys(t, h, typed("demo")...)
	golden(t, "home_filtered_80x24", h.View())
}
