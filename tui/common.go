package tui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/simjecture/simjecture/engine"
)

// Study is what the dashboard asks of one study. Every method does I/O, so
// the UI calls them only inside tea.Cmds, never in Update.
type Study interface {
	// Dir is the campaign folder (no I/O).
	Dir() string
	// Refresh reads the study's snapshot and whether this process runs its supervisor.
	Refresh(ctx context.Context) (StudyState, error)
	// Processes samples the live process tree of the study's supervisor.
	Processes(ctx context.Context) ([]engine.ProcSample, error)
	// Control asks for engine.Pause, engine.Cancel or resume; in-process
	// pause and cancel return once the supervisor has stopped.
	Control(ctx context.Context, command engine.Command) error
	// Logs reads an experiment's or a turn's logs beyond the cursors
	// (indexed like t.Streams), each read bounded by engine.LogWindow.
	Logs(ctx context.Context, t engine.LogTarget, curs []engine.LogCursor) (engine.LogRead, error)
	// Evidence reads the experiments a review cites and their measured values.
	Evidence(ctx context.Context, review string) ([]engine.Evidence, error)
	// Events reads a page of the event history (Activity paging back).
	Events(ctx context.Context, p engine.EventPage) ([]engine.Event, error)
	// Steer queues operator guidance through the engine (engine.Steer).
	Steer(ctx context.Context, text string) (engine.SteerResult, error)
	// ContinuationDraft reads what a continuation of the study starts from.
	ContinuationDraft(ctx context.Context) (engine.ContinuationDraft, error)
}

// StudyState is one refresh of a study.
type StudyState struct {
	Snapshot    engine.Snapshot
	Supervising bool          // this process runs the study's supervisor now
	OtherOwner  bool          // another live process supervises it
	Final       engine.Status // what the last in-process supervisor run returned
	RunErr      string        // its error, if any
}

// Workspace is what the home and new-study screens ask of the host. Like
// Study, its methods do I/O and are only called in Cmds.
type Workspace interface {
	Studies(ctx context.Context) ([]engine.StudyEntry, error)
	// BenchRuns lists the grade reports of benchmark trials in the same
	// folders (engine.ListBenchRuns).
	BenchRuns(ctx context.Context) []engine.BenchEntry
	Probe(ctx context.Context) []engine.BackendProbe
	// Create writes a new study and returns its folder.
	Create(ctx context.Context, n NewStudy) (string, error)
	// ReadText reads an operator's file (a hypothesis or instructions file).
	ReadText(ctx context.Context, f engine.Field, path string) (string, error)
	// Demo creates the bundled demo study and returns its folder.
	Demo(ctx context.Context) (string, error)
	// Open attaches to the study in dir (launch: supervise it in this
	// process) and starts forwarding its events, tagged gen, to the UI.
	Open(ctx context.Context, dir string, launch bool, gen int) (Study, error)
}

// NewStudy is what the new-study form asks for.
type NewStudy struct {
	Dir              string
	Hypothesis       string // typed text, used when HypothesisFile is empty
	HypothesisFile   string
	Instructions     string
	InstructionsFile string
	Request          engine.Request // the rest: backends, model, policy, times
}

// Common is what every screen shares: styles, keys, the host and options.
type Common struct {
	Styles   Styles
	Keys     KeyMap
	Work     Workspace
	Root     string // the workspace root the home screen lists
	ReadOnly bool
	// DefaultBackend is the new-study form's preselected execution backend
	// ("auto" unless the environment names another; never process-cooperative).
	DefaultBackend string
	// Tick is the refresh period of the dashboard (500 ms); the home
	// screen refreshes every fourth tick.
	Tick time.Duration
	// Clock reads the time inside Cmds (nil: time.Now; tests fix it).
	Clock func() time.Time
}

// now reads the clock; only Cmds call it.
func (c *Common) now() time.Time {
	if c.Clock == nil {
		return time.Now()
	}
	return c.Clock()
}

// Styles are the lipgloss styles of the UI. Every meaning they carry is
// also carried by text (markers, brackets), so NO_COLOR loses nothing.
type Styles struct {
	Title, Focus, Dim, Selected, Warn, Bad, Good, Bar, Key lipgloss.Style
}

// DefaultStyles returns the UI's styles.
func DefaultStyles() Styles {
	s := lipgloss.NewStyle
	return Styles{
		Title:    s().Bold(true),
		Focus:    s().Bold(true).Foreground(lipgloss.Color("12")),
		Dim:      s().Foreground(lipgloss.Color("8")),
		Selected: s().Reverse(true),
		Warn:     s().Foreground(lipgloss.Color("11")).Bold(true),
		Bad:      s().Foreground(lipgloss.Color("9")),
		Good:     s().Foreground(lipgloss.Color("10")),
		Bar:      s().Reverse(true),
		Key:      s().Bold(true),
	}
}

// KeyMap holds every key binding of the UI.
type KeyMap struct {
	Quit, ForceQuit, Help, Tab, BackTab, Up, Down, Enter, Back  key.Binding
	New, Demo, Refresh, Pause, Resume, Cancel, Dismiss, Warning key.Binding
	Yes, No, Review, Left, Right                                key.Binding
	Background                                                  key.Binding // leave the study running
	PageUp, PageDown, Top, Bottom                               key.Binding
	Filter                                                      key.Binding // narrow a list
	Steer, Continue                                             key.Binding // operator guidance; a continuation phase
}

// DefaultKeys returns the key bindings.
func DefaultKeys() KeyMap {
	b := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keys[0], help))
	}
	return KeyMap{
		Quit: b("quit", "q"), ForceQuit: b("quit", "ctrl+c"), Help: b("help", "?", "f1"),
		Tab: b("next pane", "tab"), BackTab: b("previous pane", "shift+tab"),
		Up: b("up", "up", "k"), Down: b("down", "down", "j"), Enter: b("open", "enter"), Back: b("back", "esc"),
		New: b("new study", "n"), Demo: b("demo", "d"), Refresh: b("refresh", "r"),
		Pause: b("pause", "p"), Resume: b("resume", "r"), Cancel: b("cancel", "c"),
		Dismiss: b("dismiss warning", "x", "esc"), Warning: b("isolation warning", "w"),
		Yes: b("yes", "y"), No: b("no", "n", "esc"), Review: b("review", "ctrl+s"),
		Left: b("previous choice", "left"), Right: b("next choice", "right", " "),
		Background: b("leave it running in the background", "b"),
		PageUp:     b("page up", "pgup"), PageDown: b("page down", "pgdown", " "),
		Top: b("top", "g", "home"), Bottom: b("end", "G", "end"),
		Filter: b("filter", "/"),
		Steer:  b("guidance", "s"), Continue: b("continue", "C"),
	}
}

// Messages that move between screens.
type (
	// openStudyMsg asks the root to open the dashboard for dir.
	openStudyMsg struct {
		dir    string
		launch bool
	}
	// homeMsg asks the root to show the home screen.
	homeMsg struct{}
	// quitMsg ends the program.
	quitMsg struct{}
)

// msgCmd returns a Cmd that produces msg.
func msgCmd(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// resume is the TUI's own command: supervise the study in this process
// again. It never reaches engine.Control, which only stops studies.
const resume engine.Command = "resume"

// background is the TUI's other own command: hand the study this process
// supervises to a detached supervisor (Options.Detach) and confirm that it
// took the study.
const background engine.Command = "background"
