package provider

import (
	"context"
	"path/filepath"
	"time"
)

// InFreshSession runs t again through run in a new session, for a CLI
// backend whose resume found no record of the session: no cursor, note
// before the prompt, logs in t.LogDir/sub, and only what is left of the
// allowance since started. first is the failed attempt, whose duration
// counts; with no allowance left it is the outcome.
func InFreshSession(ctx context.Context, t Turn, started time.Time, first Outcome, note, sub string,
	run func(context.Context, Turn) (Outcome, error)) (Outcome, error) {
	fresh := t
	fresh.Cursor = ""
	fresh.Prompt = note + t.Prompt
	fresh.LogDir = filepath.Join(t.LogDir, sub)
	fresh.Timeout = t.Timeout - time.Since(started)
	if fresh.Timeout <= 0 {
		return first, nil
	}
	out, err := run(ctx, fresh)
	out.Duration += first.Duration
	out.Lingering = out.Lingering || first.Lingering // the first attempt's tree counts too
	return out, err
}
