package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// serveArg selects the persistent runner: HelperArg --serve --parent-pid P.
const serveArg = "--serve"

// runnerRequest is one request the host writes to the runner's stdin.
type runnerRequest struct {
	Op string `json:"op"` // "start" or "cancel"
	ID uint64 `json:"id"`
	// Config is what to run (start only).
	Config *helperConfig `json:"config,omitempty"`
}

// runnerReply is the one reply the runner writes per finished run.
type runnerReply struct {
	ID     uint64       `json:"id"`
	Report helperReport `json:"report"`
	// Live is set on a usage report of a run still running (cfg.UsageEvery):
	// Report is then empty, and the run's one final reply is still to come.
	Live *Usage `json:"live,omitempty"`
}

// errStopping is the report of a run asked for while the runner stops: it
// was not started, and the host starts it on a new runner.
const errStopping = "helper: runner is stopping"

// runner is the serve mode's state around the shared server.
type runner struct {
	srv    *server
	out    sync.Mutex // serialises replies
	enc    *replyWriter
	outErr error // the first failed reply write (under out): the host is gone

	mu       sync.Mutex // guards stopping and runs.Add
	stopping bool
	runs     sync.WaitGroup
}

// serveMain is the persistent runner: it reads requests on stdin, runs each
// experiment under its own watchdog goroutine and writes one reply line per
// finished run. When its parent dies (PR_SET_PDEATHSIG, SIGTERM), it gets
// SIGTERM or SIGINT, or its stdin closes, it kills every run's tree and
// exits.
func serveMain(args []string) int {
	fs := flag.NewFlagSet(HelperArg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	parentPID := fs.Int("parent-pid", 0, "")
	if err := fs.Parse(args); err != nil || *parentPID <= 0 {
		fmt.Fprintln(os.Stderr, "sandbox runner: usage: --serve --parent-pid P")
		return exitUsage
	}
	if !becomeRunner(*parentPID) {
		return exitParentGone
	}
	reserveThreads(threadReserve)
	r := &runner{srv: newServer(*parentPID), enc: newReplyWriter(os.Stdout)}
	sigs := make(chan os.Signal, 64)
	// SIGPIPE is caught so that a reply written to a host that is gone
	// fails with EPIPE (see send) instead of killing the runner before it
	// has ended its runs. Caught rather than ignored: an ignored signal
	// would stay ignored in every experiment.
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGPIPE)
	chld := make(chan os.Signal, 64)
	r.srv.chld = newChldRelay(chld, !pidfdsWatchable())
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { r.signals(sigs, chld, done) })
	r.srv.refillGate() // the first run's, before its request can come
	in := pollableStdin()
	wg.Go(func() { r.read(in) })
	go r.srv.refillCgroup() // the first run's
	<-r.srv.gone
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.runs.Wait()
	r.srv.closeGate()
	r.srv.dropSpareCgroup()
	r.srv.sweep()
	signal.Stop(sigs)
	signal.Stop(chld)
	close(done)
	_ = in.Close() // ends the reader if stdin is still open
	wg.Wait()
	return 0
}

// pollableStdin returns stdin in non-blocking mode, so that reading it parks
// the reader in Go's poller instead of holding a thread (and its scheduler
// slot) in read(2), and so that Close ends a pending read. The host holds
// the other end of the pipe; nobody else shares this file description.
func pollableStdin() *os.File {
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	return os.NewFile(0, "stdin")
}

// signals reaps on each relayed SIGCHLD (chld.go) and stops the runner on
// SIGTERM or SIGINT.
func (r *runner) signals(sigs, chld chan os.Signal, done chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-chld:
			r.srv.reap()
		case s := <-sigs:
			if s != syscall.SIGPIPE { // a write's EPIPE says that one (see send)
				r.srv.stop()
			}
		}
	}
}

// read handles requests until stdin closes, then stops the runner. A
// stream that does not decode cannot be read on from there: the runner
// stops as for a closed stdin (its runs are killed) and says why.
func (r *runner) read(in io.Reader) {
	defer r.srv.stop()
	rd := newRequestReader(in)
	for {
		req, err := rd.read()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				fmt.Fprintln(os.Stderr, "sandbox runner: bad request stream:", err)
			}
			return
		}
		switch req.Op {
		case "start":
			r.start(req)
		case "cancel":
			r.srv.cancel(req.ID)
		default:
			fmt.Fprintf(os.Stderr, "sandbox runner: unknown request %q ignored\n", req.Op)
		}
	}
}

// start launches one run under its own watchdog goroutine.
func (r *runner) start(req runnerRequest) {
	var cfg helperConfig
	err := errors.New("helper: start without a config")
	if req.Config != nil {
		cfg, err = *req.Config, req.Config.validate()
	}
	if err == nil && cfg.ParentPID != r.srv.parentPID {
		err = errors.New("helper: parent pid differs from the runner's")
	}
	if err != nil {
		r.reply(req.ID, helperReport{Error: err.Error()})
		return
	}
	w := newWatchdog(cfg, r.srv, req.ID)
	if cfg.UsageEvery > 0 {
		w.usage = func(u Usage) { r.live(req.ID, u) }
	}
	r.mu.Lock()
	if r.stopping {
		r.mu.Unlock()
		r.reply(req.ID, helperReport{Error: errStopping})
		return
	}
	r.runs.Add(1) // before serveMain can wait for the runs
	r.mu.Unlock()
	// The target is launched here, on the reader, rather than on the run's
	// goroutine, which would first have to be scheduled; launches are
	// serialised by the reaper's lock anyway.
	if !w.open() {
		r.reply(req.ID, w.rep)
		r.runs.Done()
		return
	}
	go func() {
		defer r.runs.Done()
		r.reply(req.ID, w.supervise())
		// The next run's gate is forked once this run's report is out:
		// forked while the experiment ran, it took a CPU from it (and the
		// reaper's lock from its exit) on every short run. It takes the
		// lock before the host can have sent another request (it has the
		// report to collect first), and a run whose request comes during
		// the fork waits for it there (takeGate).
		r.srv.refillGate()
		w.release()
		w.cg.remove()
		r.srv.refillCgroup()
	}()
}

// live writes a usage report of run id.
func (r *runner) live(id uint64, u Usage) { r.send(runnerReply{ID: id, Live: &u}) }

func (r *runner) reply(id uint64, rep helperReport) { r.send(runnerReply{ID: id, Report: rep}) }

// send writes one reply. A write that fails means that nobody reads the
// replies any more (the host was killed, or closed its end): nothing can be
// reported from then on, so the runner stops as for a dead parent — its
// runs are killed and its strays swept before it exits.
func (r *runner) send(rep runnerReply) {
	r.out.Lock()
	defer r.out.Unlock()
	if r.outErr != nil {
		return
	}
	if err := r.enc.write(rep); err != nil {
		r.outErr = err
		fmt.Fprintln(os.Stderr, "sandbox runner: host gone: reply:", err)
		r.srv.stop()
	}
}

// cancel asks run id to stop; an unknown id (a finished run) is ignored.
func (s *server) cancel(id uint64) {
	s.mu.Lock()
	w := s.active[id]
	s.mu.Unlock()
	if w != nil {
		w.requestCancel()
	}
}

// onSignal handles a signal in one-shot mode: SIGCHLD reaps; SIGTERM or
// SIGINT cancels the run, or stops it as for a dead parent when the parent
// is gone.
func (s *server) onSignal(sig os.Signal, cancel func()) {
	switch {
	case sig == syscall.SIGCHLD:
		s.reap()
	case !s.parentAlive():
		s.stop()
	default:
		cancel()
	}
}

// sweep SIGKILLs every process still below the runner until none is left
// (or about 5 s have passed): every run has ended, so all are strays.
func (s *server) sweep() {
	tick := time.NewTicker(sampleEvery / 5)
	defer tick.Stop()
	for range 5 * cleanupRetries {
		s.reap()
		left := descendants(s.self)
		if len(left) == 0 {
			return
		}
		for _, pid := range left {
			if st, err := readStat(pid); err == nil {
				signalIfSame(pid, st.start, syscall.SIGKILL)
			}
		}
		<-tick.C
	}
}
