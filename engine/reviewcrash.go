package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// MaxReviewCrashes is how many attempts of one review may end in a crashed
// reviewer (a transient provider failure) before the study pauses for the
// operator. A malformed verdict is counted apart (MaxReviewAttempts).
const MaxReviewCrashes = 3

// reviewWaits holds, per review, when its next attempt may start after a
// crash: the backoff of one review, kept apart from worker turns.
type reviewWaits struct {
	mu   sync.Mutex
	next map[string]time.Time
}

func (w *reviewWaits) set(id string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.next == nil {
		w.next = map[string]time.Time{}
	}
	w.next[id] = at
}

// due reports whether review id may be attempted now.
func (w *reviewWaits) due(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !time.Now().Before(w.next[id])
}

// reviewCrashed records a reviewer that failed transiently: the review's
// attempts, crashes and last error (the reviewer's last stderr line) are
// persisted; the next attempt of the review waits Backoff(crashes), and
// after MaxReviewCrashes the study pauses for the operator. logs are the
// hashes of the attempt's folder.
func (sv *Supervisor) reviewCrashed(ctx context.Context, r Review, f *provider.Failure, logs TurnLogs) Status {
	crashes, attempts := r.Crashes+1, r.Attempts+1 // counted in memory first, so a failed write cannot hide it
	err := sv.s.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		cur, err := getReview(tx, r.ID)
		if err != nil {
			return err
		}
		cur.Attempts, cur.Crashes = max(cur.Attempts+1, attempts), max(cur.Crashes+1, crashes)
		cur.LastError = f.Message
		attempts, crashes = cur.Attempts, cur.Crashes
		if err := putReview(tx, cur); err != nil {
			return err
		}
		return appendEvent(tx, ReviewFailedPayload{Review: r.ID, Attempt: cur.Attempts, Error: f.Message, Logs: logs})
	})
	sv.Bus.Notify()
	if err != nil {
		sv.storeFailed("record a failed review attempt", fmt.Errorf("review %s: %w", r.ID, err))
	}
	if crashes >= MaxReviewCrashes {
		return sv.needsAttention(ctx, "reviewer", fmt.Sprintf("the reviewer of review %s failed %d times "+
			"(last: %s); fix the reviewer, then resume this study", r.ID, crashes, f.Message))
	}
	sv.reviews.set(r.ID, time.Now().Add(max(0, min(sv.opt.Backoff(crashes), sv.remaining()))))
	return goOn
}
