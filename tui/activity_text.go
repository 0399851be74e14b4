package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/simjecture/simjecture/engine"
)

// An Activity row is a sentence: one renderer per event type decodes the
// event's payload type (engine/events.go) and says what happened. An
// event of a type without a renderer, or whose payload does not decode,
// falls back to its type name and its best-known fields.

// sentence renders the payload of one event type.
type sentence func(json.RawMessage) (string, error)

// says makes a sentence of a function of the event's payload type.
func says[P any](f func(P) string) sentence {
	return func(raw json.RawMessage) (string, error) {
		var p P
		if err := json.Unmarshal(raw, &p); err != nil {
			return "", fmt.Errorf("decode payload: %w", err)
		}
		return f(p), nil
	}
}

// sentences holds the renderer of every event type.
var sentences = map[engine.EventType]sentence{
	engine.EvStudyCreated: says(func(p engine.StudyCreatedPayload) string {
		return fmt.Sprintf("study created (%s, %s, policy %s)", p.AgentBackend, shortBackend(string(p.ExecutionBackend)), p.CompletionPolicy)
	}),
	engine.EvStudyState: says(func(p engine.StudyStatePayload) string {
		switch {
		case p.Activity == "", p.Activity == "stopped: "+string(p.Status):
			return "study " + string(p.Status)
		case strings.HasPrefix(p.Activity, string(p.Status)):
			return "study " + p.Activity // "study completed: every claim is resolved"
		}
		return "study " + string(p.Status) + ": " + p.Activity
	}),
	engine.EvActivity: says(func(p engine.ActivityPayload) string { return p.Activity }),
	engine.EvTurnStarted: says(func(p engine.TurnStartedPayload) string {
		if p.Role == "" || p.Role == "worker" {
			return fmt.Sprintf("turn %d started", p.Turn)
		}
		return fmt.Sprintf("%s turn %d started", p.Role, p.Turn)
	}),
	engine.EvTurnEnded: says(func(p engine.TurnEndedPayload) string {
		what, ended := fmt.Sprintf("turn %d", p.Turn), "ended"
		if p.Review != "" {
			what = fmt.Sprintf("review %s attempt %d", p.Review, p.Turn)
		}
		if p.Stopped != "" {
			ended = "stopped (" + p.Stopped + ")"
		}
		if len(p.Logs) == 0 {
			return fmt.Sprintf("%s %s (its logs not hashed)", what, ended)
		}
		return fmt.Sprintf("%s %s; %d log file(s) hashed", what, ended, len(p.Logs))
	}),
	engine.EvIdleTurn: says(func(p engine.IdleTurnPayload) string {
		return fmt.Sprintf("idle turn: nothing changed (%d in a row)", p.Streak)
	}),
	engine.EvSessionRecovery: says(func(p engine.SessionRecoveryPayload) string {
		return fmt.Sprintf("fresh worker session after %d idle turns (recovery %d)", p.IdleStreak, p.Recoveries)
	}),
	engine.EvExperimentQueued: says(func(p engine.ExperimentQueuedPayload) string {
		return strings.TrimSpace(ref(p.Experiment) + " queued: " + p.Source + " " + strings.Join(p.Args, " "))
	}),
	engine.EvExperimentStarted: says(func(p engine.ExperimentStartedPayload) string {
		return strings.TrimSuffix(ref(p.Experiment)+" started in "+shortBackend(string(p.Backend)), " in ")
	}),
	engine.EvExperimentFinished: says(finishedSentence),
	engine.EvExperimentInterrupted: says(func(p engine.ExperimentInterruptedPayload) string {
		return ref(p.Experiment) + " interrupted: its supervisor stopped"
	}),
	engine.EvExperimentPlaced: says(func(p engine.ExperimentPlacedPayload) string {
		return strings.TrimSuffix(fmt.Sprintf("%s %s on %s as job %s, node %s", ref(p.Experiment), p.State, p.Machine, p.Job, p.Node), ", node ")
	}),
	engine.EvExperimentCancelRequested: says(func(p engine.ExperimentCancelRequestedPayload) string {
		return strings.TrimSuffix("cancel of "+ref(p.Experiment)+" asked: "+p.Reason, ": ")
	}),
	engine.EvClaimCommitted: says(func(p engine.ClaimCommittedPayload) string {
		return fmt.Sprintf("claim %s committed under %s: %s", ref(p.Claim), ref(p.Parent), oneLine(p.Statement))
	}),
	engine.EvClaimStatus: says(func(p engine.ClaimStatusPayload) string {
		return fmt.Sprintf("claim %s is now %s", ref(p.Claim), p.Status)
	}),
	engine.EvClaimRegistered: says(func(p engine.ClaimRegisteredPayload) string {
		return fmt.Sprintf("%s claim %s registered (%s %s): %s", p.Kind, ref(p.Claim), p.Relation, ref(p.Parent), oneLine(p.Statement))
	}),
	engine.EvContractRegistered: says(func(p engine.ContractRegisteredPayload) string {
		return fmt.Sprintf("contract v%d of %s registered (%s)", p.Version, ref(p.Claim), p.Purpose)
	}),
	engine.EvEvidenceLinked: says(func(p engine.EvidenceLinkedPayload) string {
		counts := "does not count"
		if p.Counts {
			counts = "counts"
		}
		return fmt.Sprintf("%s linked to %s under contract v%d: %s", ref(p.Experiment), ref(p.Claim), p.ContractVersion, counts)
	}),
	engine.EvClaimClosed: says(func(p engine.ClaimClosedPayload) string {
		return fmt.Sprintf("claim %s closed as %s: %s", ref(p.Claim), p.Status, oneLine(p.Reason))
	}),
	engine.EvReviewQueued: says(func(p engine.ReviewQueuedPayload) string {
		return fmt.Sprintf("review of %s asked: %s", ref(p.Claim), p.Disposition)
	}),
	engine.EvReviewResolved: says(func(p engine.ReviewResolvedPayload) string {
		return fmt.Sprintf("review of %s: %s, %s", ref(p.Claim), p.Decision, p.Disposition)
	}),
	engine.EvReviewFailed: says(func(p engine.ReviewFailedPayload) string {
		return fmt.Sprintf("review %s failed (attempt %d): %s", ref(p.Review), p.Attempt, oneLine(p.Error))
	}),
	engine.EvNoteAdded: says(func(p engine.NoteAddedPayload) string { return "note: " + oneLine(p.Statement) }),
	engine.EvReviewRequested: says(func(p engine.ReviewRequestedPayload) string {
		return fmt.Sprintf("%s review of %s (contract v%d) asked", p.Stage, ref(p.Claim), p.ContractVersion)
	}),
	engine.EvContractReviewed: says(func(p engine.ContractReviewedPayload) string {
		return fmt.Sprintf("contract v%d of %s reviewed: %s", p.ContractVersion, ref(p.Claim), p.Decision)
	}),
	engine.EvAdjudicated: says(func(p engine.AdjudicatedPayload) string {
		return fmt.Sprintf("the judge found contract v%d evidence of %s %s", p.ContractVersion, ref(p.Claim), p.Decision)
	}),
	engine.EvAssignmentStarted: says(func(p engine.AssignmentStartedPayload) string {
		return fmt.Sprintf("%s assigned to %s", p.Role, ref(p.Claim))
	}),
	engine.EvHandoff: says(func(p engine.HandoffPayload) string {
		if p.Forced {
			return fmt.Sprintf("assignment %s ended by the host: %s", ref(p.Assignment), p.Outcome)
		}
		return fmt.Sprintf("assignment %s handed off: %s", ref(p.Assignment), p.Outcome)
	}),
	engine.EvSteeringQueued: says(func(p engine.SteeringQueuedPayload) string {
		return fmt.Sprintf("operator guidance %s queued (%d characters, advisory)", ref(p.ID), p.Chars)
	}),
	engine.EvSteeringDelivered: says(func(p engine.SteeringDeliveredPayload) string {
		return fmt.Sprintf("turn %d's prompt carries operator guidance %s", p.Turn, strings.Join(p.IDs, ", "))
	}),
	engine.EvControlRequested: says(func(p engine.ControlRequestedPayload) string {
		if p.By == "agent" {
			return "the agent asked to " + string(p.Command)
		}
		return "the operator asked to " + string(p.Command)
	}),
	engine.EvHarnessError: says(func(p engine.HarnessErrorPayload) string {
		where := ""
		if p.Where != "" {
			where = " in " + p.Where
		}
		return "harness error" + where + ": " + oneLine(p.Error)
	}),
	engine.EvProviderReconnectScheduled: says(func(p engine.ProviderReconnectScheduledPayload) string {
		return fmt.Sprintf("provider: reconnecting in %s (attempt %d)", secs(p.DelaySeconds), p.Attempt)
	}),
	engine.EvProviderReconnected: says(func(p engine.ProviderReconnectedPayload) string {
		return fmt.Sprintf("provider: reconnected after %d failed attempts", p.Attempts)
	}),
	engine.EvProviderNeedsAttention: says(func(p engine.ProviderNeedsAttentionPayload) string {
		return "provider needs attention: " + oneLine(p.Attention)
	}),
	engine.EvUsage: says(func(p engine.UsagePayload) string {
		return fmt.Sprintf("turn used %s input and %s output tokens", tokenCount(p.InputTokens), tokenCount(p.OutputTokens))
	}),
	engine.EvPoolUnreachable: says(func(p engine.PoolUnreachablePayload) string {
		return "no machine of the pool can be reached (" + strings.Join(p.Workers, ", ") + "): queued experiments wait · " + oneLine(p.Reason)
	}),
	engine.EvPoolRecovered: says(func(p engine.PoolRecoveredPayload) string {
		return "worker " + p.Worker + " reachable again: queued experiments resume"
	}),
	engine.EvRecord: says(func(p engine.RecordPayload) string {
		return fmt.Sprintf("%s %s recorded (%s)", p.Kind, ref(p.ID), p.Status)
	}),
}

func finishedSentence(p engine.ExperimentFinishedPayload) string {
	s := ref(p.Experiment) + " " + string(p.Status)
	if p.WallSeconds != nil {
		s += " in " + secs(*p.WallSeconds)
	}
	if p.LimitExceeded != nil {
		s += " (" + *p.LimitExceeded + " limit exceeded)"
	}
	return s
}

// eventText is what an event says, as a sentence.
func eventText(ev engine.Event) string {
	if f, ok := sentences[ev.Type]; ok {
		if s, err := f(ev.Payload); err == nil {
			return s
		}
	}
	return fallbackText(ev)
}

// fallbackText is the type name and the payload's best-known fields.
func fallbackText(ev engine.Event) string {
	var p map[string]any
	_ = json.Unmarshal(ev.Payload, &p)
	parts := []string{string(ev.Type)}
	for _, k := range []string{"experiment", "status", "activity", "claim", "review", "command", "error"} {
		if v, ok := p[k]; ok {
			parts = append(parts, fmt.Sprint(v))
		}
	}
	return strings.Join(parts, " ")
}

// eventLine is an Activity row: the time of day and the sentence.
func eventLine(ev engine.Event) string {
	ts := ev.Time
	if t, err := time.Parse(time.RFC3339Nano, ev.Time); err == nil {
		ts = t.UTC().Format("15:04:05")
	}
	return ts + " " + eventText(ev)
}

// ref is an id short enough for a sentence: exp_52f19cc9…
func ref(id string) string {
	if len(id) > 12 {
		return id[:12] + "…"
	}
	return id
}

// secs is a duration in seconds as a sentence says it: 0.4 s, 12 s.
func secs(f float64) string {
	switch {
	case f < 10:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") + " s"
	case f < 60:
		return fmt.Sprintf("%.0f s", f)
	}
	return dur(time.Duration(f * float64(time.Second)))
}

func tokenCount(n *int64) string {
	if n == nil {
		return "unknown"
	}
	return fmt.Sprint(*n)
}
