package tui

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/simjecture/simjecture/engine"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// t0 is the fixed clock of every model test.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeEngine is the Study and Workspace of model tests. Every method counts
// as one engine call, so a test can tell whether Update did I/O.
type fakeEngine struct {
	calls    atomic.Int64
	state    StudyState
	procs    []engine.ProcSample
	studies  []engine.StudyEntry
	benches  []engine.BenchEntry
	probes   []engine.BackendProbe
	controls []engine.Command
	created  []NewStudy
	logs     func(engine.LogTarget, []engine.LogCursor) engine.LogRead // the log viewer's reads
	// controlErr is what Control returns for a command (nil: success).
	controlErr map[engine.Command]error
	files      map[string]string            // what ReadText finds
	evidence   map[string][]engine.Evidence // what Evidence finds, by review
	history    []engine.Event               // the event log Events pages, oldest first
	contFake                                // Steer and ContinuationDraft (steer_test.go)
}

func (f *fakeEngine) Dir() string { return "/work/studies/kepler" }

func (f *fakeEngine) Refresh(context.Context) (StudyState, error) {
	f.calls.Add(1)
	return f.state, nil
}

func (f *fakeEngine) Processes(context.Context) ([]engine.ProcSample, error) {
	f.calls.Add(1)
	return f.procs, nil
}

func (f *fakeEngine) Control(_ context.Context, command engine.Command) error {
	f.calls.Add(1)
	f.controls = append(f.controls, command)
	return f.controlErr[command]
}

func (f *fakeEngine) BenchRuns(context.Context) []engine.BenchEntry {
	f.calls.Add(1)
	return f.benches
}

func (f *fakeEngine) Studies(context.Context) ([]engine.StudyEntry, error) {
	f.calls.Add(1)
	return f.studies, nil
}

func (f *fakeEngine) Probe(context.Context) []engine.BackendProbe {
	f.calls.Add(1)
	return f.probes
}

func (f *fakeEngine) Create(_ context.Context, n NewStudy) (string, error) {
	f.calls.Add(1)
	f.created = append(f.created, n)
	return n.Dir, nil
}

func (f *fakeEngine) ReadText(_ context.Context, _ engine.Field, path string) (string, error) {
	f.calls.Add(1)
	if text, ok := f.files[path]; ok {
		return text, nil
	}
	return "", errors.New("open " + path + ": no such file or directory")
}

func (f *fakeEngine) Demo(context.Context) (string, error) {
	f.calls.Add(1)
	return "/work/studies/demo", nil
}

func (f *fakeEngine) Open(_ context.Context, dir string, _ bool, _ int) (Study, error) {
	f.calls.Add(1)
	if dir == "" {
		return nil, errors.New("no folder")
	}
	return f, nil
}

func newCommon(f *fakeEngine, readOnly bool) *Common {
	return &Common{Styles: DefaultStyles(), Keys: DefaultKeys(), Work: f, Root: "/work/studies", ReadOnly: readOnly,
		DefaultBackend: "auto", Clock: func() time.Time { return t0 }} // no Tick: tests send tickMsg themselves
}

func ptr[T any](v T) *T { return &v }

// fixture is a running study in PRoot with a provider waiting to reconnect.
func fixture() *fakeEngine {
	root, repair := "root", "claim_24b0e25f8d33"
	started := t0.Add(-90 * time.Second)
	snap := engine.Snapshot{
		StudyHeader: engine.StudyHeader{
			StudyID: "study_1", Status: engine.StatusRunning, Activity: "worker turn 3", Mode: "minimal",
			AgentBackend: "command", Model: "local", ExecutionBackend: "proot-cooperative", CompletionPolicy: "repair",
			Campaign: "/work/studies/kepler", CreatedAt: t0.Add(-10 * time.Minute), Deadline: t0.Add(50 * time.Minute), Turn: 3,
			Provider: engine.ProviderState{RetryCount: 2, ConsecutiveFailures: 2, NextRetryAt: ptr(t0.Add(4 * time.Second))},
		},
		Claims: []engine.Claim{
			{ID: root, Statement: "Explicit Euler conserves the energy of a Kepler orbit to 1 %.", Status: "falsified", CreatedAt: t0.Add(-9 * time.Minute)},
			{ID: repair, Parent: &root, Statement: "Leapfrog conserves it to 1e-4.", Status: "supported", CreatedAt: t0.Add(-8 * time.Minute)},
			{ID: "claim_99aa00bb11cc", Parent: &repair, Statement: "RK4 drifts secularly.", Status: "open", CreatedAt: t0.Add(-7 * time.Minute)},
		},
		Experiments: []engine.Receipt{
			{ID: "exp_52f19cc973d3274d5f6c18e7", Status: "succeeded", IsolationBackend: "proot-cooperative", Source: "kepler.py",
				Args: []string{"--method", "euler"}, WallSeconds: ptr(0.41), PeakRSSBytes: ptr(int64(14 << 20)),
				StdoutTail: "max |dE/E0| = 0.58\n", ArtifactDir: "/work/studies/kepler/experiments/exp_52f19cc973d3274d5f6c18e7"},
			{ID: "exp_7414d181768254f796d579ab", Status: "running", IsolationBackend: "proot-cooperative", Source: "kepler.py", StartedAt: &started},
			{ID: "exp_bfb2add7aaaaaaaaaaaaaaaa", Status: "queued", Source: "rk4.py"},
		},
		Reviews: []engine.Review{
			{ID: "rev_47ebfa35f4bf71c5", Claim: root, Disposition: "falsified", Status: "resolved", Attempts: 1,
				Verdict: &engine.Verdict{Decision: "approved", Disposition: "falsified", Rationale: "the measured error is 0.58"}},
			{ID: "rev_5a00c33700000000", Claim: repair, Disposition: "supported", Status: "queued"},
		},
	}
	procs := []engine.ProcSample{
		{PID: 4100, Depth: 0, Command: "simjecture study --campaign /work/studies/kepler", State: "S", CPUPercent: 1.5,
			RSSBytes: 40 << 20, RSSHistory: []int64{38 << 20, 39 << 20, 40 << 20}, CPUHistory: []float64{2, 1, 1.5}, Elapsed: 10 * time.Minute, Role: engine.RoleSupervisor, Backend: "host"},
		{PID: 4120, Depth: 1, Command: "python3 agent.py", State: "S", RSSBytes: 20 << 20, RSSHistory: []int64{10 << 20, 20 << 20},
			Elapsed: 30 * time.Second, Role: engine.RoleAgent, Backend: "host"},
		{PID: 4133, Depth: 1, Command: "simjecture __sandbox-runner --dir /run/exp_7414d181", State: "S", RSSBytes: 8 << 20,
			RSSHistory: []int64{8 << 20}, Elapsed: 90 * time.Second, Role: engine.RoleExperiment, Backend: "proot-cooperative",
			Experiment: "exp_7414d181768254f796d579ab", Launcher: engine.LauncherRunner},
		{PID: 4138, Depth: 2, Command: "proot -r / python3 /work/kepler.py", State: "S", RSSBytes: 2 << 20,
			RSSHistory: []int64{2 << 20}, Elapsed: 90 * time.Second, Role: engine.RoleExperiment, Backend: "proot-cooperative",
			Experiment: "exp_7414d181768254f796d579ab", Launcher: engine.LauncherPRoot},
		{PID: 4140, Depth: 3, Command: "python3 /work/kepler.py --method leapfrog", State: "R", CPUPercent: 99.8, RSSBytes: 120 << 20,
			RSSHistory: []int64{20 << 20, 60 << 20, 90 << 20, 120 << 20}, CPUHistory: []float64{40, 80, 99, 99.8},
			Elapsed: 89 * time.Second, Role: engine.RoleExperiment, Backend: "proot-cooperative", Experiment: "exp_7414d181768254f796d579ab"},
	}
	return &fakeEngine{state: StudyState{Snapshot: snap, Supervising: true}, procs: procs,
		probes: []engine.BackendProbe{
			{Backend: "auto", Available: true, Selected: "bubblewrap", Reason: "Execution probe passed"},
			{Backend: "bubblewrap", Available: true, Reason: "Execution probe passed"},
			{Backend: "proot-cooperative", Reason: "cooperative execution requires an unprivileged account", Cooperative: true},
			{Backend: "process-cooperative", Reason: "cooperative execution requires an unprivileged account", Cooperative: true},
		},
		studies: []engine.StudyEntry{
			{Dir: "/work/studies/kepler", Name: "kepler", Status: "running", ExecutionBackend: "proot-cooperative",
				RemainingSeconds: 3000, Hypothesis: "Explicit Euler conserves the energy of a Kepler orbit to 1 %.", Owned: true},
			{Dir: "/work/studies/demo-1", Name: "demo-1", Status: "completed", ExecutionBackend: "bubblewrap", Hypothesis: "Demo."},
		}}
}

func event(seq int64, typ engine.EventType, payload any) engine.Event {
	b, _ := json.Marshal(payload)
	return engine.Event{Seq: seq, Time: t0.Add(time.Duration(seq) * time.Second).Format(time.RFC3339Nano), Type: typ, Payload: b}
}

// step runs Update and returns the new root model and its Cmd.
func step(t testing.TB, m tea.Model, msg tea.Msg) (Model, tea.Cmd) {
	t.Helper()
	next, cmd := m.Update(msg)
	return next.(Model), cmd
}

// run executes cmd (and any batch it holds) and returns the messages it produced.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, run(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// feed steps m through the messages cmd produces, and those their Cmds
// produce, skipping timer ticks and quitting.
func feed(t testing.TB, m Model, cmd tea.Cmd) Model {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for i := 0; len(queue) > 0 && i < 100; i++ {
		c := queue[0]
		queue = queue[1:]
		for _, msg := range run(c) {
			switch msg.(type) {
			case tickMsg, tea.QuitMsg:
				continue
			}
			var next tea.Cmd
			m, next = step(t, m, msg)
			queue = append(queue, next)
		}
	}
	return m
}

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "ctrl+s":
		return tea.KeyMsg{Type: tea.KeyCtrlS}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// openDash returns a root model showing the fixture's dashboard, loaded.
func openDash(t testing.TB, f *fakeEngine, readOnly bool, w, h int) Model {
	t.Helper()
	m := NewModel(context.Background(), newCommon(f, readOnly), Start{Study: f, Now: t0})
	m, _ = step(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = feed(t, m, m.Init())
	m, _ = step(t, m, tickMsg{gen: m.dash.gen, now: t0})
	m, _ = step(t, m, eventsMsg{gen: m.dash.gen, events: []engine.Event{
		event(40, engine.EvExperimentStarted, engine.ExperimentStartedPayload{Experiment: "exp_7414d181768254f796d579ab"}),
		event(41, "provider_retry", map[string]any{"error": "HTTP 503"}),
	}})
	m = feed(t, m, m.dash.refreshCmd())
	return m
}

// golden compares got with testdata/NAME.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./tui -run %s -update to accept):\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}
