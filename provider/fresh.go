package provider

import (
	"context"
	"fmt"
	"time"
)

// InFreshSession runs t again through run in a new session, for a CLI
// backend whose resume found no record of the session: no cursor, note
// before the prompt, and only what is left of the allowance since
// started. first is the failed attempt, whose duration counts; with no
// allowance left it is the outcome.
//
// The new session's logs go to FreshLogDir(t, sub), a sibling of the
// turn's log folder made here with mkdir(2): the failed attempt's agent
// could write in its own log folder, never in its parent, so nothing it
// left can be in (or be) the new folder, and an existing one is refused.
// The enclosure (Turn.Wrap) makes that folder writable for the new launch.
func InFreshSession(ctx context.Context, t Turn, started time.Time, first Outcome, note, sub string,
	run func(context.Context, Turn) (Outcome, error)) (Outcome, error) {
	fresh := t
	fresh.Cursor = ""
	fresh.Prompt = note + t.Prompt
	fresh.LogDir = FreshLogDir(t, sub)
	fresh.Timeout = t.Timeout - time.Since(started)
	if fresh.Timeout <= 0 {
		return first, nil
	}
	if err := MakeNewDir(fresh.LogDir); err != nil {
		return first, fmt.Errorf("the new session's log folder: %w", err)
	}
	out, err := run(ctx, fresh)
	out.Duration += first.Duration
	out.Lingering = out.Lingering || first.Lingering // the first attempt's tree counts too
	return out, err
}

// FreshLogDir is the log folder of t's retry in a new session:
// LOGDIR-sub beside t's own (supervisor/turn-00002-new-thread).
func FreshLogDir(t Turn, sub string) string { return t.LogDir + "-" + sub }
