package engine

import (
	"context"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// Backoff is the wait before the retry that follows n consecutive transient
// failures: 2, 4, 8, 16, 32, 60, 60 … seconds, no jitter.
func Backoff(n int) time.Duration {
	return time.Duration(min(60, 1<<min(max(n, 1), 6))) * time.Second
}

// providerFailure handles a failed turn: the operator's problems pause the
// study; anything else is retried after a backoff capped by the deadline.
func (sv *Supervisor) providerFailure(ctx context.Context, out provider.Outcome) Status {
	f := out.Failure
	if f.NeedsOperator() {
		return sv.needsAttention(ctx, f.Category, provider.Attention[f.Category]+" ("+f.Message+")")
	}
	// A retry that cannot be scheduled still waits, though not as long.
	delay := max(0, min(2*time.Second, sv.remaining()))
	sv.record(ctx, "schedule the provider retry", func(tx *store.Tx, st *SupervisorState) error {
		p := &st.Provider
		p.RetryCount++
		p.ConsecutiveFailures++
		p.FailedTurnSeconds += out.Duration.Seconds()
		delay = max(0, min(sv.opt.Backoff(p.ConsecutiveFailures), sv.remaining()))
		next := time.Now().UTC().Add(delay)
		p.NextRetryAt = &next
		cat := f.Category
		p.ErrorCategory = &cat
		st.LastError = f.Message
		st.Activity = "Reconnecting provider"
		return appendEvent(tx, ProviderReconnectScheduledPayload{Attempt: p.ConsecutiveFailures,
			DelaySeconds: delay.Seconds(), Deadline: sv.k.Deadline, Error: f.Message})
	})
	start := time.Now()
	stop := sv.sleep(ctx, delay)
	waited := time.Since(start).Seconds()
	sv.record(ctx, "record the provider wait", func(tx *store.Tx, st *SupervisorState) error {
		st.Provider.WaitSeconds += waited
		st.Provider.NextRetryAt = nil
		return nil
	})
	return stop
}

// providerRecovered resets the failure streak after a good turn.
func (sv *Supervisor) providerRecovered(ctx context.Context) {
	sv.record(ctx, "record the provider's recovery", func(tx *store.Tx, st *SupervisorState) error {
		p := &st.Provider
		if p.ConsecutiveFailures == 0 {
			return nil
		}
		attempts := p.ConsecutiveFailures
		p.ConsecutiveFailures, p.ErrorCategory, p.Attention, p.NextRetryAt = 0, nil, nil, nil
		st.LastError = ""
		return appendEvent(tx, ProviderReconnectedPayload{Attempts: attempts})
	})
}

// needsAttention stops the study for the operator.
func (sv *Supervisor) needsAttention(ctx context.Context, category, message string) Status {
	sv.record(ctx, "record that the provider needs attention", func(tx *store.Tx, st *SupervisorState) error {
		cat, msg := category, message
		st.Provider.ErrorCategory, st.Provider.Attention = &cat, &msg
		st.LastError = message
		return appendEvent(tx, ProviderNeedsAttentionPayload{Category: category, Attention: message})
	})
	return StatusPausedExternalError
}
