package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// benchFixture is the home fixture with three grade reports, one of which
// has no trial wall time (a plain `bench grade`) and no model.
func benchFixture() *fakeEngine {
	f := fixture()
	f.benches = []engine.BenchEntry{
		{File: "/work/studies/runs/grades/trial-2.json", Task: "kepler-energy", Model: "claude-sonnet", Agent: "claude", Passed: true,
			ChecksPassed: 12, Checks: 12, WallSeconds: ptr(312.5), GradeSeconds: 2.1, ModTime: t0.Add(-time.Hour)},
		{File: "/work/studies/runs/grades/trial-1.json", Task: "kepler-energy", Model: "claude-sonnet", Agent: "claude",
			ChecksPassed: 9, Checks: 12, WallSeconds: ptr(95.0), GradeSeconds: 2.0, ModTime: t0.Add(-2 * time.Hour)},
		{File: "/work/studies/trial/grade.json", Task: "kepler-energy", Agent: "command", ChecksPassed: 0, Checks: 12,
			GradeSeconds: 0.8, ModTime: t0.Add(-3 * time.Hour)},
	}
	return f
}

func TestGoldenHomeBenchRuns(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := homeModelFor(t, benchFixture(), size[0], size[1])
			v := m.View()
			golden(t, fmt.Sprintf("home_bench_%dx%d", size[0], size[1]), v)
			assertFits(t, v, size[0], size[1])
			for _, want := range []string{"Benchmark runs (3)", "claude-sonnet / claude", "passed", "failed", "12/12", "9/12", "0/12",
				"5m1", "0.80s grade", "kepler", "demo-1"} {
				if !strings.Contains(v, want) {
					t.Errorf("no %q in\n%s", want, v)
				}
			}
		})
	}
	small := homeModelFor(t, benchFixture(), 80, 12).View() // a third of 12 rows holds one report and the rest counted
	if !strings.Contains(small, "… 2 more") {
		t.Errorf("a small screen does not count the reports left out:\n%s", small)
	}
}

// TestHomeBenchRunsOnAnySize: the home screen with benchmark runs draws on
// every height, also its first frame, before the terminal's size is known
// (the list can arrive first): it used to panic there (a block of -2 lines)
// and end the TUI.
func TestHomeBenchRunsOnAnySize(t *testing.T) {
	t.Parallel()
	m := NewModel(context.Background(), newCommon(benchFixture(), false), Start{Now: t0})
	m = feed(t, m, m.Init()) // the studies and runs, no size yet
	_ = m.View()
	for h := 1; h <= 12; h++ {
		sized, _ := step(t, m, tea.WindowSizeMsg{Width: 80, Height: h})
		v := sized.View()
		if h >= 6 { // the home screen's smallest layout
			assertFits(t, v, 80, h)
		}
	}
}
