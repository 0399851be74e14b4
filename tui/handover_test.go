package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// TestLeavePromptChoices: q on a supervised study asks; each answer does
// what the prompt says, and Update itself never calls the engine.
func TestLeavePromptChoices(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key      string
		controls []engine.Command
		quits    bool
	}{
		{"y", []engine.Command{engine.Pause}, true},
		{"b", []engine.Command{background}, true},
		{"ctrl+c", []engine.Command{engine.Pause}, true},
		{"n", nil, false},
		{"esc", nil, false},
		{"x", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			t.Parallel()
			f := fixture()
			m := openDash(t, f, false, 100, 30)
			m, _ = step(t, m, keyMsg("q"))
			if !strings.Contains(m.View(), "b leave it running") {
				t.Fatalf("the leave prompt must offer b:\n%s", m.View())
			}
			before := f.calls.Load()
			m, cmd := step(t, m, keyMsg(tc.key))
			if f.calls.Load() != before {
				t.Fatalf("%s: Update called the engine", tc.key)
			}
			if m.dash.confirm != "" {
				t.Fatalf("%s: the prompt must close", tc.key)
			}
			quits := false
			queue := []tea.Cmd{cmd}
			for len(queue) > 0 {
				for _, msg := range run(queue[0]) {
					if _, ok := msg.(tea.QuitMsg); ok {
						quits = true
						continue
					}
					var next tea.Cmd
					m, next = step(t, m, msg)
					queue = append(queue, next)
				}
				queue = queue[1:]
			}
			if quits != tc.quits || !slices.Equal(f.controls, tc.controls) {
				t.Fatalf("%s: quits %v (want %v), controls %v (want %v)", tc.key, quits, tc.quits, f.controls, tc.controls)
			}
		})
	}
}

// TestHandOverFailureStays: when the background supervisor does not take
// the study, the dashboard stays, says why on its own line, refreshes, and
// q asks again.
func TestHandOverFailureStays(t *testing.T) {
	t.Parallel()
	f := fixture()
	why := "the background supervisor exited: exit status 2: study is completed"
	f.controlErr = map[engine.Command]error{background: errors.New(why)}
	m := openDash(t, f, false, 120, 30)
	m, _ = step(t, m, keyMsg("q"))
	m, cmd := step(t, m, keyMsg("b"))
	if !m.dash.controlling || !strings.Contains(m.View(), "handing the study to a background supervisor") {
		t.Fatalf("b must start the hand-over and say so:\n%s", m.View())
	}
	msgs := run(cmd)
	if len(msgs) != 1 {
		t.Fatalf("the hand-over Cmd must report once, got %v", msgs)
	}
	if _, ok := msgs[0].(handedOverMsg); !ok {
		t.Fatalf("want a handedOverMsg, got %T", msgs[0])
	}
	m, cmd = step(t, m, msgs[0])
	if m.dash.controlling || cmd == nil || m.screen != screenDash {
		t.Fatalf("a failed hand-over must stay and refresh (controlling %v, cmd %v)", m.dash.controlling, cmd != nil)
	}
	for _, msg := range run(cmd) {
		if _, ok := msg.(stateMsg); !ok {
			t.Fatalf("after a failed hand-over want only a refresh, got %T", msg)
		}
	}
	v := m.View()
	for _, want := range []string{"⚠ could not leave it running: " + why, "stayed: the study is paused here"} {
		if !strings.Contains(v, want) {
			t.Fatalf("view lacks %q:\n%s", want, v)
		}
	}
	assertFits(t, v, 120, 30)
	m, _ = step(t, m, keyMsg("q"))
	if m.dash.confirm != "leave" {
		t.Fatal("after a failed hand-over q must ask again")
	}
	m, _ = step(t, m, keyMsg("b"))
	if m.dash.leaveErr != "" {
		t.Fatal("a new hand-over must clear the last failure")
	}
}

// TestHandOverMessagesNeedTheirGeneration: a late hand-over result of a
// study the operator left does nothing; b outside the prompt is no
// command.
func TestHandOverMessagesNeedTheirGeneration(t *testing.T) {
	t.Parallel()
	f := fixture()
	m := openDash(t, f, false, 100, 30)
	if _, cmd := step(t, m, handedOverMsg{gen: m.dash.gen + 1}); cmd != nil {
		t.Fatal("a stale hand-over result must be ignored")
	}
	if _, cmd := step(t, m, handedOverMsg{gen: m.dash.gen + 1, err: errors.New("x")}); cmd != nil {
		t.Fatal("a stale hand-over failure must be ignored")
	}
	m, cmd := step(t, m, keyMsg("b"))
	if cmd != nil || len(run(cmd)) != 0 || len(f.controls) != 0 || m.dash.controlling {
		t.Fatal("b outside the leave prompt must do nothing")
	}
}
