package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// contFake is the fake engine's steering and continuation (embedded in
// fakeEngine): what Steer was sent and returns, and the draft.
type contFake struct {
	steered  []string
	steerErr error
	draft    engine.ContinuationDraft
}

func (f *fakeEngine) Steer(_ context.Context, text string) (engine.SteerResult, error) {
	f.calls.Add(1)
	if f.steerErr != nil {
		return engine.SteerResult{}, f.steerErr
	}
	f.steered = append(f.steered, text)
	return engine.SteerResult{Steering: engine.Steering{ID: "steer_0000000000000000000000aa", Text: text}}, nil
}

func (f *fakeEngine) ContinuationDraft(context.Context) (engine.ContinuationDraft, error) {
	f.calls.Add(1)
	return f.draft, nil
}

// withGuidance gives the fixture one delivered and one queued message.
func withGuidance(f *fakeEngine) *fakeEngine {
	at := t0.Add(-30 * time.Second).Format("2006-01-02T15:04:05.999999999Z07:00")
	f.state.Snapshot.Steering = []engine.Steering{
		{ID: "steer_1", Text: "Prefer exact integer arithmetic.", CreatedAt: at, DeliveredAt: &at},
		{ID: "steer_2", Text: "Report max_abs_diff in result.json.", CreatedAt: at},
	}
	return f
}

// typeRunes types s into the model, one rune a message, and fails if any
// of them made an engine call.
func typeRunes(t *testing.T, m Model, f *fakeEngine, s string) Model {
	t.Helper()
	before := f.calls.Load()
	for _, r := range s {
		m, _ = step(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	if f.calls.Load() != before {
		t.Fatalf("typing %q made engine calls inside Update", s)
	}
	return m
}

// `s` opens the overlay with the messages and their delivery; enter sends
// the typed text through Study.Steer in a Cmd, never in Update.
func TestSteerOverlaySendsThroughTheEngine(t *testing.T) {
	t.Parallel()
	f := withGuidance(fixture())
	m := openDash(t, f, false, 80, 24)
	if !slices.ContainsFunc(m.dash.hints(), func(h hint) bool { return h.key == "s" }) {
		t.Fatalf("the footer offers no s: %v", m.dash.hints())
	}
	m, _ = step(t, m, keyMsg("s"))
	m = typeRunes(t, m, f, "try n up to 50")
	golden(t, "steer_80x24", m.View())
	assertFits(t, m.View(), 80, 24)
	before := f.calls.Load()
	m, cmd := step(t, m, keyMsg("enter"))
	if f.calls.Load() != before || cmd == nil {
		t.Fatalf("enter: %d engine calls in Update, cmd %v; want none and a Cmd", f.calls.Load()-before, cmd)
	}
	m = feed(t, m, cmd)
	if !slices.Equal(f.steered, []string{"try n up to 50"}) {
		t.Fatalf("Steer got %q", f.steered)
	}
	if v := m.View(); !strings.Contains(v, "queued steer_0000000000000000000000aa") || m.dash.steer.input.Value() != "" {
		t.Fatalf("after sending, the overlay should say queued and clear the input:\n%s", v)
	}
	m, _ = step(t, m, keyMsg("esc"))
	if m.dash.steer.open || strings.Contains(m.View(), "Operator guidance") {
		t.Fatal("esc did not close the overlay")
	}
}

// The engine's refusal (the study has ended) is shown in its own words,
// without the sentinel; an empty message is not sent.
func TestSteerOverlayShowsTheEngineRefusal(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.steerErr = errors.New("the study has ended (completed); guidance goes to a continuation phase: " +
		"simjecture study --campaign NEW --continue-from /work/studies/kepler: invalid input")
	m := openDash(t, f, false, 100, 30)
	m, _ = step(t, m, keyMsg("s"))
	if _, cmd := step(t, m, keyMsg("enter")); cmd != nil {
		t.Fatal("enter on an empty message sent it")
	}
	m = typeRunes(t, m, f, "more")
	m, cmd := step(t, m, keyMsg("enter"))
	m = feed(t, m, cmd)
	v := m.View()
	if !strings.Contains(v, "the study has ended (completed)") || strings.Contains(v, "invalid input") {
		t.Fatalf("the overlay should show the engine's message without its sentinel:\n%s", v)
	}
}

// In read-only the overlay lists the messages and takes none.
func TestSteerOverlayReadOnly(t *testing.T) {
	t.Parallel()
	f := withGuidance(fixture())
	m := openDash(t, f, true, 100, 30)
	m, _ = step(t, m, keyMsg("s"))
	m = typeRunes(t, m, f, "hello")
	m, cmd := step(t, m, keyMsg("enter"))
	m = feed(t, m, cmd)
	v := m.View()
	if len(f.steered) != 0 || !strings.Contains(v, "read-only: guidance cannot be sent") ||
		!strings.Contains(v, "Prefer exact integer arithmetic.") || !strings.Contains(v, "delivered at 03:03:35") {
		t.Fatalf("read-only overlay: sent %q; view:\n%s", f.steered, v)
	}
}
