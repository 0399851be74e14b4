package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// formWithAgent opens the new-study form and chooses the i-th agent backend.
func formWithAgent(t *testing.T, f *fakeEngine, i int) Model {
	t.Helper()
	m := newFormModel(t, f, "auto")
	for m.form.focus != fAgent {
		m, _ = step(t, m, keyMsg("tab"))
	}
	for range i {
		m, _ = step(t, m, tea.KeyMsg{Type: tea.KeyRight})
	}
	return m
}

// TestFormShowsTheFieldsOfEachAgentBackend: for every row of the engine's
// agent backend table the form shows exactly the inputs of the fields the
// backend takes, and tab never lands on another.
func TestFormShowsTheFieldsOfEachAgentBackend(t *testing.T) {
	t.Parallel()
	for _, field := range engine.AgentFields() {
		if labelOf(field) == "" {
			t.Errorf("engine field %q has no input in the new-study form", field)
		}
	}
	for i, b := range engine.AgentBackends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			m := formWithAgent(t, fixture(), i)
			view := m.View()
			if !strings.Contains(view, "‹ "+b.Name+" ›") {
				t.Fatalf("the form does not show backend %s:\n%s", b.Name, view)
			}
			for _, f := range formAgentFields {
				shown := strings.Contains(view, fmt.Sprintf("  %-15s ", fieldLabels[f.input]))
				if want := b.Need(f.field) != engine.Forbidden; shown != want {
					t.Errorf("%s: input %q shown %v, want %v", b.Name, fieldLabels[f.input], shown, want)
				}
			}
			for range fieldCount {
				m, _ = step(t, m, keyMsg("tab"))
				if fd, ok := agentFieldOf(m.form.focus); ok && b.Need(fd) == engine.Forbidden {
					t.Fatalf("%s: tab focused %q, which the backend does not take", b.Name, fieldLabels[m.form.focus])
				}
			}
		})
	}
}

func agentIndex(t *testing.T, name string) int {
	t.Helper()
	for i, b := range engine.AgentBackends() {
		if b.Name == name {
			return i
		}
	}
	t.Fatalf("no agent backend %s", name)
	return 0
}

// TestFormAPIStudyCarriesItsConnectionFile: an api study from the form
// needs its connection file, shows it on the review and creates the study
// with it.
func TestFormAPIStudyCarriesItsConnectionFile(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.files = map[string]string{"/tmp/instructions.txt": "Measure it.", "/tmp/hypothesis.txt": "Euler conserves energy."}
	m := formWithAgent(t, f, agentIndex(t, "api"))
	m, _ = step(t, m, keyMsg("shift+tab"))
	m = typeText(t, m, "/tmp/instructions.txt")
	for range 3 {
		m, _ = step(t, m, keyMsg("shift+tab"))
	}
	m = typeText(t, m, "/tmp/hypothesis.txt")
	for m.form.focus != fModel {
		m, _ = step(t, m, keyMsg("tab"))
	}
	m = typeText(t, m, "gpt-test")
	m, _ = step(t, m, keyMsg("ctrl+s"))
	if m.screen != screenForm || m.form.err != "Connection file is required for the api backend" {
		t.Fatalf("an api study without a connection file: screen %d, err %q", m.screen, m.form.err)
	}
	m, _ = step(t, m, keyMsg("tab"))
	if m.form.focus != fConnection {
		t.Fatalf("after Model, tab focuses %q, want the connection file", fieldLabels[m.form.focus])
	}
	m = typeText(t, m, "/tmp/conn.json")
	m, cmd := step(t, m, keyMsg("ctrl+s"))
	m = feed(t, m, cmd)
	if m.screen != screenReview || !strings.Contains(m.View(), "/tmp/conn.json") {
		t.Fatalf("the review must show the connection file (screen %d, err %q):\n%s", m.screen, m.form.err, m.View())
	}
	m, cmd = step(t, m, keyMsg("enter"))
	feed(t, m, cmd)
	if len(f.created) != 1 {
		t.Fatalf("created %d studies", len(f.created))
	}
	r := f.created[0].Request
	if r.AgentBackend != "api" || r.Model != "gpt-test" || r.ProviderConfig != "/tmp/conn.json" || r.Executable != "" {
		t.Errorf("created %+v", r)
	}
}

// TestFieldErrorsInFormWords: an engine field error names the form's label.
func TestFieldErrorsInFormWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{&engine.FieldError{Backend: "api", Field: engine.FieldProviderConfig, Problem: engine.Missing},
			"Connection file is required for the api backend"},
		{&engine.FieldError{Backend: "scripted", Field: engine.FieldExecutable, Problem: engine.Refused},
			"the scripted backend takes no Executable"},
		{fmt.Errorf("create: %w", &engine.FieldError{Backend: "api", Field: engine.FieldProviderConfig, Problem: engine.Invalid,
			Err: errors.New("mode 0644, want 0600")}), "Connection file: mode 0644, want 0600"},
		{errors.New("disk full"), "disk full"},
	}
	for _, tt := range tests {
		if got := errText(tt.err); got != tt.want {
			t.Errorf("errText(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
