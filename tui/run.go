package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/simjecture/simjecture/engine"
)

// Options configure Run.
type Options struct {
	Root           string // workspace root for the home screen
	Campaign       string // open this study's dashboard instead of home
	ReadOnly       bool   // disable every control
	DefaultBackend string // the form's preselected execution backend
	// Supervisor is a study this process already opened (runDashboard);
	// Run supervises it. The caller closes it after Run returns.
	Supervisor *engine.Supervisor
	// Launch opens a supervisor for the study in dir (main: engine.OpenStudy).
	Launch func(ctx context.Context, dir string) (*engine.Supervisor, error)
	// Demo creates the demo study and returns its folder.
	Demo func(ctx context.Context) (string, error)
	In   io.Reader
	Out  io.Writer
	// NoAltScreen keeps the normal screen (tests).
	NoAltScreen bool

	// Detach starts a supervisor of the study in dir in its own session,
	// which outlives this process (main: `resume --campaign DIR --batch`);
	// nil disables "leave it running".
	Detach func(dir string) (Detached, error)
}

// runtime owns the program, the bridge goroutine, the followers and the
// supervised studies, and is the production Workspace.
type runtime struct {
	opt    Options
	bridge *Bridge
	wg     sync.WaitGroup
	ctx    context.Context

	mu       sync.Mutex
	studies  []*liveStudy
	unfollow context.CancelFunc
}

// Run shows the UI until the operator leaves and returns the final status
// of the study this process last supervised ("" when it supervised none).
// A study still supervised when the UI ends is paused first.
func Run(ctx context.Context, opt Options) (engine.Status, error) {
	if os.Getenv("NO_COLOR") != "" {
		lipgloss.SetColorProfile(termenv.Ascii)
	}
	r := &runtime{opt: opt, ctx: ctx}
	c := &Common{Styles: DefaultStyles(), Keys: DefaultKeys(), Work: r, Root: opt.Root, ReadOnly: opt.ReadOnly,
		DefaultBackend: opt.DefaultBackend, Tick: 500 * time.Millisecond}
	start := Start{Campaign: opt.Campaign, Now: time.Now()}
	var first *liveStudy
	if opt.Supervisor != nil {
		first = r.supervised(opt.Supervisor)
		start.Study = first
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(opt.In), tea.WithOutput(opt.Out)}
	if !opt.NoAltScreen {
		popts = append(popts, tea.WithAltScreen())
	}
	p := tea.NewProgram(NewModel(ctx, c, start), popts...)
	bctx, stopBridge := context.WithCancel(ctx)
	r.bridge = NewBridge(p.Send, 1024)
	r.wg.Go(func() { r.bridge.Run(bctx) })
	if first != nil {
		r.follow(first, 1)
		first.start()
	}
	_, err := p.Run()
	r.shutdown(stopBridge)
	return r.final(first), err
}

// shutdown stops following, pauses what is still supervised, waits for
// every goroutine and releases the studies.
func (r *runtime) shutdown(stopBridge context.CancelFunc) {
	r.mu.Lock()
	if r.unfollow != nil {
		r.unfollow()
	}
	studies := r.studies
	r.mu.Unlock()
	stopBridge()
	for _, s := range studies {
		s.stopAndWait()
	}
	r.wg.Wait()
	for _, s := range studies {
		s.close()
	}
}

// final is the outcome of the first study when Run was given one, else
// of the last study this process supervised.
func (r *runtime) final(first *liveStudy) engine.Status {
	if first != nil {
		f, _ := first.result()
		return f
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out engine.Status
	for _, s := range r.studies {
		if f, _ := s.result(); f != "" {
			out = f
		}
	}
	return out
}

func (r *runtime) supervised(sup *engine.Supervisor) *liveStudy {
	s := &liveStudy{c: sup.View().Campaign(), view: sup.View(), mon: engine.NewProcMonitor(), wg: &r.wg,
		runCtx: r.ctx, sup: sup, detach: r.opt.Detach}
	r.mu.Lock()
	r.studies = append(r.studies, s)
	r.mu.Unlock()
	return s
}

// follow forwards the study's events, from a few before the newest, to
// the bridge under gen, replacing the previous follower.
func (r *runtime) follow(s *liveStudy, gen int) {
	fctx, cancel := context.WithCancel(r.ctx)
	r.mu.Lock()
	if r.unfollow != nil {
		r.unfollow()
	}
	r.unfollow = cancel
	r.mu.Unlock()
	r.wg.Go(func() {
		last, _ := s.view.LastSeq(fctx)
		_ = s.view.Follow(fctx, max(0, last-followBack), func(ev engine.Event) error {
			return r.bridge.Push(fctx, gen, ev)
		})
	})
}

// Studies lists the studies under the root.
func (r *runtime) Studies(ctx context.Context) ([]engine.StudyEntry, error) {
	return engine.ListStudies(ctx, r.opt.Root)
}

// BenchRuns lists the benchmark grade reports under the root.
func (r *runtime) BenchRuns(context.Context) []engine.BenchEntry {
	return engine.ListBenchRuns(r.opt.Root)
}

// Probe probes the execution backends.
func (r *runtime) Probe(ctx context.Context) []engine.BackendProbe { return engine.ProbeBackends(ctx) }

// Create writes the new study.
func (r *runtime) Create(ctx context.Context, n NewStudy) (string, error) {
	c, err := engine.NewCampaign(n.Dir)
	if err != nil {
		return "", err
	}
	req := n.Request
	req.HypothesisFile, req.InstructionsFile = n.HypothesisFile, n.InstructionsFile
	if _, err := engine.CreateStudyText(ctx, c, req, n.Hypothesis, n.Instructions); err != nil {
		return "", err
	}
	return c.Dir, nil
}

// ReadText reads an operator's file, the one behind field f, with the
// engine's checks (its bound, UTF-8 text): the CLI's refusals, in the
// form's words.
func (r *runtime) ReadText(_ context.Context, f engine.Field, path string) (string, error) {
	text, err := engine.ReadOperatorText(f, path)
	if fe, ok := engine.AsFieldError(err); ok {
		return "", fe.Err // the form names the field itself
	}
	if err != nil {
		return "", err // an *os.PathError: it names the file and the reason
	}
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return text, nil
}

// Demo creates the demo study.
func (r *runtime) Demo(ctx context.Context) (string, error) {
	if r.opt.Demo == nil {
		return "", fmt.Errorf("the demo is not available here")
	}
	return r.opt.Demo(ctx)
}

// Open attaches to the study in dir, or supervises it when launch is set.
func (r *runtime) Open(ctx context.Context, dir string, launch bool, gen int) (Study, error) {
	c, err := engine.NewCampaign(dir)
	if err != nil {
		return nil, err
	}
	view, err := engine.OpenView(ctx, c)
	if err != nil {
		return nil, err
	}
	s := &liveStudy{c: c, view: view, mon: engine.NewProcMonitor(), wg: &r.wg, runCtx: r.ctx, readOnly: r.opt.ReadOnly}
	if !r.opt.ReadOnly {
		s.launch, s.detach = r.opt.Launch, r.opt.Detach
	}
	if launch {
		if err := s.resume(ctx); err != nil {
			_ = view.Close()
			return nil, err
		}
	}
	r.mu.Lock()
	r.studies = append(r.studies, s)
	r.mu.Unlock()
	r.follow(s, gen)
	return s, nil
}
