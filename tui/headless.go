package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/simjecture/simjecture/engine"
)

// Headless prints a study's progress without a terminal UI: a status line on
// stderr (redrawn in place on a terminal, one plain line per change
// otherwise) and, with JSONL, one JSON event per line on stdout.
type Headless struct {
	View   *engine.View
	Stdout io.Writer
	Stderr io.Writer
	TTY    bool
	JSONL  bool
	From   int64 // print events after this sequence number

	mu      sync.Mutex
	last    string
	printed int64
}

// Run follows the study until ctx ends.
func (h *Headless) Run(ctx context.Context) error {
	var pending bool
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	events := make(chan engine.Event, 256)
	errc := make(chan error, 1)
	go func() {
		errc <- h.View.Follow(ctx, h.From, func(ev engine.Event) error {
			select {
			case events <- ev:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for {
		select {
		case ev := <-events:
			h.emit(ev)
			pending = true
		case <-tick.C:
			if pending {
				h.Redraw(ctx)
				pending = false
			}
		case <-ctx.Done():
			return <-errc
		}
	}
}

func (h *Headless) emit(ev engine.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Seq <= h.printed {
		return
	}
	h.printed = ev.Seq
	if !h.JSONL {
		return
	}
	b, err := json.Marshal(ev)
	if err == nil {
		_, _ = fmt.Fprintf(engine.TerminalSafeJSON(h.Stdout), "%s\n", b)
	}
}

// Drain prints the events written since the last one printed; call it
// after Run has returned.
func (h *Headless) Drain(ctx context.Context) error {
	last, err := h.View.LastSeq(ctx)
	h.mu.Lock()
	from := max(h.printed, h.From)
	h.mu.Unlock()
	if err != nil || from >= last {
		return err
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return h.View.Follow(dctx, from, func(ev engine.Event) error {
		h.emit(ev)
		if ev.Seq >= last {
			cancel()
		}
		return nil
	})
}

// Redraw prints the status line if it changed.
func (h *Headless) Redraw(ctx context.Context) {
	sum, err := h.View.Summary(ctx)
	if err != nil {
		return
	}
	line := engine.PrintableLine(SummaryLine(sum, time.Now()))
	h.mu.Lock()
	defer h.mu.Unlock()
	if line == h.last {
		return
	}
	h.last = line
	if h.TTY {
		_, _ = fmt.Fprintf(h.Stderr, "\r\033[K%s", line)
	} else {
		_, _ = fmt.Fprintln(h.Stderr, line)
	}
}

// Finish ends the status line and prints where the records are.
func (h *Headless) Finish(ctx context.Context, final engine.Status) {
	h.Redraw(ctx)
	if h.TTY {
		_, _ = fmt.Fprintln(h.Stderr)
	}
	_, _ = fmt.Fprintf(h.Stderr, "Study %s. Records: %s\n", final, engine.Printable(h.View.Campaign().Dir))
}

// SummaryLine renders the one-line summary of a study from its counts.
func SummaryLine(s engine.Summary, now time.Time) string {
	e := s.Experiments
	run := e[engine.ExpRunning] + e[engine.ExpQueued]
	done := e[engine.ExpSucceeded]
	failed := e[engine.ExpFailed] + e[engine.ExpTimedOut]
	stopped := e[engine.ExpCancelled] + e[engine.ExpInterrupted] // by the operator or the study's stop, not by failing
	activity := s.Activity
	if p := s.Provider; p.NextRetryAt != nil {
		activity = fmt.Sprintf("Reconnecting provider (attempt %d, %ds to retry)", p.ConsecutiveFailures,
			max(0, int(p.NextRetryAt.Sub(now).Seconds()+0.5)))
	}
	elapsed := studyElapsed(s, now)
	parts := []string{
		fmt.Sprintf("%s · %s · %s", s.Mode, agentName(s.AgentBackend, s.Model), s.ExecutionBackend),
		fmt.Sprintf("%s · %s", s.Status, activity),
		fmt.Sprintf("%02d:%02d elapsed · %s", int(elapsed.Minutes()), int(elapsed.Seconds())%60, budgetLeft(s)),
		fmt.Sprintf("jobs %d running / %d done / %d failed / %d stopped", run, done, failed, stopped),
		fmt.Sprintf("reviews %d queued · claims %s", s.Reviews["queued"], claimSummary(s.Claims)),
		"tokens " + tokens(s.Usage) + fmt.Sprintf(" · provider wait %.1fm", s.Provider.WaitSeconds/60),
	}
	return strings.Join(parts, " | ")
}

// budgetLeft is what remains of the deadline; an ended study counts
// nothing down.
func budgetLeft(s engine.Summary) string {
	if engine.Terminal(s.Status) {
		return "ended"
	}
	return secondsClock(s.RemainingSeconds) + " left"
}

// studyElapsed is how long the study has run: until now while it runs
// (or was interrupted), else until it stopped (its newest event), so a
// record read later still shows its own duration.
func studyElapsed(s engine.Summary, now time.Time) time.Duration {
	end := now
	if s.Status != engine.StatusRunning && s.Status != engine.StatusInterrupted && !s.LastEventAt.IsZero() {
		end = s.LastEventAt
	}
	return max(0, end.Sub(s.CreatedAt))
}

func agentName(backend, model string) string {
	if model == "" {
		return backend
	}
	return backend + "/" + model
}

// secondsClock renders seconds as 1h02m, 4m05s or 59s.
func secondsClock(sec int64) string {
	switch {
	case sec >= 3600:
		return fmt.Sprintf("%dh%02dm", sec/3600, sec%3600/60)
	case sec >= 60:
		return fmt.Sprintf("%dm%02ds", sec/60, sec%60)
	}
	return fmt.Sprintf("%ds", sec)
}

func claimSummary(claims []engine.Claim) string {
	parts := make([]string, 0, len(claims))
	for _, c := range claims {
		parts = append(parts, c.ID+"="+c.Status)
	}
	if len(parts) > 4 {
		parts = append(parts[:4], fmt.Sprintf("+%d", len(claims)-4))
	}
	return strings.Join(parts, ",")
}

func tokens(u engine.Usage) string {
	f := func(p *int64) string {
		if p == nil {
			return "unknown"
		}
		return fmt.Sprint(*p)
	}
	return f(u.InputTokens) + " in / " + f(u.OutputTokens) + " out"
}
