package tui

import (
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// setName stores a backend name in a field of the sandbox's Backend type,
// which this package cannot name.
func setName[T ~string](p *T, s string) { *p = T(s) }

// unwrapped joins rendered lines with single spaces, undoing word wrap.
func unwrapped(lines []string) string {
	return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
}

// TestEveryBackendRendered proves every row of the engine's backend table
// reaches the screens: its choice in the form, its mode indicator, its table
// column and, for a cooperative one, its warning pane.
func TestEveryBackendRendered(t *testing.T) {
	t.Parallel()
	rows := engine.ExecutionBackends()
	if len(rows) == 0 {
		t.Fatal("the engine lists no execution backends")
	}
	form := newFormModel(t, fixture(), "auto").View()
	for _, b := range rows {
		t.Run(b.Name, func(t *testing.T) {
			if !strings.Contains(form, b.Label) {
				t.Errorf("the form lacks %q", b.Label)
			}
			f := fixture()
			setName(&f.state.Snapshot.ExecutionBackend, b.Name)
			for i := range f.procs {
				f.procs[i].Backend = b.Name
			}
			m := openDash(t, f, false, 120, 40)
			view := m.View()
			for _, want := range []string{"[" + b.Short + "]", " " + b.Column} {
				if !strings.Contains(view, want) {
					t.Errorf("the dashboard lacks %q:\n%s", want, view)
				}
			}
			if !b.Cooperative {
				return
			}
			pane := unwrapped(m.dash.warningLines(sidebarWidth))
			for _, want := range []string{b.Title, b.Explains, "not a security sandbox"} {
				if !strings.Contains(pane, want) {
					t.Errorf("the warning pane lacks %q: %s", want, pane)
				}
			}
		})
	}
}

// TestPreselectFollowsTable proves the form preselects a default backend
// exactly when the table lets it.
func TestPreselectFollowsTable(t *testing.T) {
	t.Parallel()
	for i, b := range engine.ExecutionBackends() {
		want := 0 // auto
		if b.Preselect {
			want = i + 1
		}
		if got := newFormModel(t, fixture(), b.Name).form.backend; got != want {
			t.Errorf("default %s preselects choice %d, want %d", b.Name, got, want)
		}
	}
}
