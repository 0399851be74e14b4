package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// TestUpdateDoesNoIO drives every kind of message through Update and checks
// that Update itself never calls the engine: all I/O is in the Cmds.
func TestUpdateDoesNoIO(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, false, 80, 24)
	gen := m.dash.gen
	msgs := []tea.Msg{
		tea.WindowSizeMsg{Width: 100, Height: 30},
		eventsMsg{gen: gen, events: []engine.Event{event(50, "activity", map[string]string{"activity": "x"})}},
		eventsMsg{gen: gen, events: []engine.Event{event(51, "activity", map[string]string{"activity": "y"})}},
		stateMsg{gen: gen, state: f.state}, procsMsg{gen: gen, rows: f.procs}, tickMsg{gen: gen, now: t0},
		tickMsg{gen: gen, now: t0}, tickMsg{gen: gen, now: t0}, tickMsg{gen: gen, now: t0},
		keyMsg("tab"), keyMsg("down"), keyMsg("j"), keyMsg("k"), keyMsg("enter"), keyMsg("esc"), keyMsg("?"), keyMsg("x"),
		keyMsg("w"), keyMsg("x"), keyMsg("p"), controlDoneMsg{gen: gen, command: engine.Pause}, keyMsg("c"), keyMsg("n"),
		keyMsg("r"), keyMsg("q"), keyMsg("n"), stateMsg{gen: gen + 5}, procsMsg{gen: gen + 5},
		keyMsg("tab"), keyMsg("tab"), keyMsg("enter"), evidenceMsg{gen: gen, review: "rev_47ebfa35f4bf71c5"}, keyMsg("esc"),
		keyMsg("tab"), keyMsg("j"), keyMsg("j"), keyMsg("k"), historyMsg{gen: gen, older: true, limit: 5},
		historyMsg{gen: gen, limit: 5}, historyMsg{gen: gen + 5},
	}
	before := f.calls.Load()
	cmds := 0
	for i, msg := range msgs {
		var cmd tea.Cmd
		m, cmd = step(t, m, msg)
		_ = m.View()
		if got := f.calls.Load(); got != before {
			t.Fatalf("message %d (%T) made %d engine call(s) inside Update", i, msg, got-before)
		}
		if cmd != nil {
			cmds++
		}
	}
	if len(msgs) < 25 || cmds == 0 {
		t.Fatalf("the test must send at least 25 messages and get Cmds back (%d, %d)", len(msgs), cmds)
	}
	// The Cmds are where the I/O happens.
	run(m.dash.refreshCmd())
	if f.calls.Load() == before {
		t.Fatal("the refresh Cmd made no engine call; the counter is broken")
	}
}

func TestCooperativeWarningDismissAndReopen(t *testing.T) {
	t.Parallel()
	m := openDash(t, fixture(), false, 100, 30)
	view := m.View()
	for _, want := range []string{"Cooperative execution", "not a security sandbox", "[PRoot · cooperative ⚠]"} {
		if !strings.Contains(view, want) {
			t.Fatalf("view lacks %q:\n%s", want, view)
		}
	}
	m, _ = step(t, m, keyMsg("x"))
	if v := m.View(); strings.Contains(v, "Cooperative execution") || !strings.Contains(v, "PRoot · cooperative ⚠") {
		t.Fatalf("after x the sidebar must go and the indicator stay:\n%s", v)
	}
	m, _ = step(t, m, keyMsg("w"))
	if !strings.Contains(m.View(), "Cooperative execution") {
		t.Fatal("w did not reopen the warning")
	}
	m, _ = step(t, m, keyMsg("esc"))
	if strings.Contains(m.View(), "Cooperative execution") {
		t.Fatal("esc did not dismiss the warning")
	}
}

func TestNoWarningForBubblewrap(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.state.Snapshot.ExecutionBackend = "bubblewrap"
	m := openDash(t, f, false, 100, 30)
	if v := m.View(); strings.Contains(v, "Cooperative execution") || !strings.Contains(v, "[Bubblewrap · isolated]") {
		t.Fatalf("bubblewrap view:\n%s", v)
	}
	m, _ = step(t, m, keyMsg("w"))
	if !strings.Contains(m.View(), "no isolation warning applies") {
		t.Fatal("w on bubblewrap should say that no warning applies")
	}
}

func TestPauseCancelResumeKeys(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, false, 80, 24)
	m, cmd := step(t, m, keyMsg("p"))
	m = feed(t, m, cmd)
	m, cmd = step(t, m, keyMsg("c"))
	if cmd != nil || m.dash.confirm != "cancel" || !strings.Contains(m.View(), "Cancel the study?") {
		t.Fatalf("c must ask first (cmd %v, confirm %q)", cmd != nil, m.dash.confirm)
	}
	m, cmd = step(t, m, keyMsg("n"))
	if cmd != nil || m.dash.confirm != "" {
		t.Fatal("n must cancel the question and do nothing")
	}
	m, _ = step(t, m, keyMsg("c"))
	m, cmd = step(t, m, keyMsg("y"))
	m = feed(t, m, cmd)
	// The last refresh may still show the supervisor that just paused as
	// the owner: r asks anyway, and the engine takes the lock or says why not.
	f.state.Snapshot.Status, f.state.Supervising, f.state.OtherOwner = engine.StatusPaused, false, true
	m = feed(t, m, m.dash.refreshCmd())
	m, cmd = step(t, m, keyMsg("r"))
	feed(t, m, cmd)
	if want := []engine.Command{engine.Pause, engine.Cancel, resume}; !slices.Equal(f.controls, want) {
		t.Fatalf("controls = %v, want %v", f.controls, want)
	}
}

func TestReadOnlyDisablesControls(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, true, 80, 24)
	for _, k := range []string{"p", "c", "r"} {
		var cmd tea.Cmd
		m, cmd = step(t, m, keyMsg(k))
		if cmd != nil || m.dash.confirm != "" {
			t.Fatalf("%s in read-only mode returned a command or asked", k)
		}
	}
	if v := m.View(); !strings.Contains(v, "read-only") {
		t.Fatalf("the status bar must say read-only:\n%s", v)
	}
}

func TestLeaveAsksAndPausesWhenSupervising(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, false, 80, 24)
	m, cmd := step(t, m, keyMsg("q"))
	if cmd != nil || m.dash.confirm != "leave" {
		t.Fatal("q while supervising a running study must ask first")
	}
	m, cmd = step(t, m, keyMsg("y"))
	msgs := run(cmd)
	if len(msgs) != 1 || !slices.Equal(f.controls, []engine.Command{engine.Pause}) {
		t.Fatalf("leaving must pause first: msgs %v, controls %v", msgs, f.controls)
	}
	_, cmd = step(t, m, msgs[0])
	if fmt.Sprint(run(cmd)) != fmt.Sprint([]tea.Msg{tea.QuitMsg{}}) {
		t.Fatal("after pausing, leaving a --campaign dashboard quits")
	}
}

func TestLeaveAttachedQuitsAtOnce(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.state.Supervising, f.state.OtherOwner = false, true
	m := openDash(t, f, false, 80, 24)
	_, cmd := step(t, m, keyMsg("q"))
	msgs := run(cmd)
	if len(msgs) != 1 || len(f.controls) != 0 {
		t.Fatalf("q on an attached study must leave without a control: %v %v", msgs, f.controls)
	}
}

func TestStaleGenerationIgnored(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, false, 80, 24)
	other := f.state
	other.Snapshot.Status = engine.StatusCancelled
	m, _ = step(t, m, stateMsg{gen: m.dash.gen + 1, state: other})
	m, _ = step(t, m, eventsMsg{gen: m.dash.gen - 1, events: []engine.Event{event(99, "x", nil)}})
	if m.dash.state.Snapshot.Status != engine.StatusRunning || len(m.dash.events) != 2 {
		t.Fatalf("a stale message changed the dashboard: %s, %d events", m.dash.state.Snapshot.Status, len(m.dash.events))
	}
}

func TestEventsCoalesceIntoOneRefresh(t *testing.T) {
	t.Parallel()
	m := openDash(t, fixture(), false, 80, 24)
	gen := m.dash.gen
	m, first := step(t, m, eventsMsg{gen: gen, events: []engine.Event{event(60, "a", nil)}})
	if first == nil {
		t.Fatal("an event must ask for a refresh")
	}
	for i := range 10 {
		var cmd tea.Cmd
		m, cmd = step(t, m, eventsMsg{gen: gen, events: []engine.Event{event(int64(61+i), "b", nil)}})
		if cmd != nil {
			t.Fatal("events during a refresh must not start another one")
		}
	}
	_, cmd := step(t, m, run(first)[0])
	if cmd == nil {
		t.Fatal("events that came during the refresh must cause exactly one more")
	}
}

func TestFocusAndDetail(t *testing.T) {
	t.Parallel()
	m := openDash(t, fixture(), false, 100, 30)
	m, _ = step(t, m, keyMsg("x"))
	m, _ = step(t, m, keyMsg("tab")) // claims → experiments
	if m.dash.focus != paneExperiments {
		t.Fatalf("focus = %d", m.dash.focus)
	}
	m, _ = step(t, m, keyMsg("j")) // past the running and the queued experiment
	m, _ = step(t, m, keyMsg("j"))
	m, _ = step(t, m, keyMsg("enter"))
	if v := m.View(); !strings.Contains(v, "Experiment exp_52f19cc973d3274d5f6c18e7") || !strings.Contains(v, "max |dE/E0|") {
		t.Fatalf("experiment detail:\n%s", v)
	}
	m, _ = step(t, m, keyMsg("esc"))
	if m.dash.detail {
		t.Fatal("esc must close the detail")
	}
}

func TestGoldenDashboard(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := openDash(t, fixture(), false, size[0], size[1])
			golden(t, fmt.Sprintf("dashboard_warning_%dx%d", size[0], size[1]), m.View())
			m, _ = step(t, m, keyMsg("x"))
			golden(t, fmt.Sprintf("dashboard_%dx%d", size[0], size[1]), m.View())
			assertFits(t, m.View(), size[0], size[1])
		})
	}
}

func TestGoldenDashboardOverlays(t *testing.T) {
	t.Parallel()
	m := openDash(t, fixture(), false, 80, 24)
	m, _ = step(t, m, keyMsg("x"))
	h, _ := step(t, m, keyMsg("?"))
	golden(t, "dashboard_help_80x24", h.View())
	d, _ := step(t, m, keyMsg("enter"))
	golden(t, "dashboard_claim_80x24", d.View())
	q, _ := step(t, m, keyMsg("q"))
	golden(t, "dashboard_leave_80x24", q.View())
}

func TestResizeKeepsFit(t *testing.T) {
	t.Parallel()
	m := openDash(t, fixture(), false, 80, 24)
	for _, size := range [][2]int{{60, 20}, {40, 12}, {132, 50}, {80, 24}} {
		m, _ = step(t, m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		assertFits(t, m.View(), size[0], size[1])
	}
}

// assertFits checks that a view has exactly h lines of at most w cells.
func assertFits(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Errorf("%dx%d: view has %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > w {
			t.Errorf("%dx%d: line %d is %d cells: %q", w, h, i, n, l)
		}
	}
}

var _ = context.Background

// TestExperimentsPaneSaysWhenWindowed: a study larger than the view's
// window shows the newest experiments and says how many there are in all.
func TestExperimentsPaneSaysWhenWindowed(t *testing.T) {
	t.Parallel()
	f := fixture()
	shown := len(f.state.Snapshot.Experiments)
	f.state.Snapshot.ExperimentCounts = map[engine.ExpStatus]int{engine.ExpSucceeded: 2990, engine.ExpFailed: 10}
	m := openDash(t, f, false, 120, 40)
	want := fmt.Sprintf("Experiments (newest %d of 3000)", shown)
	if v := m.View(); !strings.Contains(v, want) {
		t.Fatalf("want %q in\n%s", want, v)
	}
}

// TestLeaveAsksRightAfterTheStart: a study this process just started still
// reads as created (paused) until the next refresh; q asks all the same.
func TestLeaveAsksRightAfterTheStart(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.state.Supervising, f.state.Snapshot.Status, f.state.Snapshot.Activity = true, engine.StatusPaused, "created"
	m := openDash(t, f, false, 100, 30)
	m, cmd := step(t, m, keyMsg("q"))
	if cmd != nil || m.dash.confirm != "leave" {
		t.Fatalf("q while supervising must ask first (cmd %v, confirm %q)", cmd != nil, m.dash.confirm)
	}
}
