package tui

import (
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestEventTextSentences: every event type of the engine reads as a
// sentence of its payload.
func TestEventTextSentences(t *testing.T) {
	root, exp, rev := "root", "exp_1a2b3c4d5e6f7a8b9c0d", "rev_47ebfa35f4bf71c5"
	next := "run it for 1000 orbits"
	mem := "memory"
	in, out := int64(1200), int64(300)
	cases := []struct {
		typ     engine.EventType
		payload any
		want    string
	}{
		{engine.EvStudyCreated, engine.StudyCreatedPayload{Contract: engine.Contract{AgentBackend: "codex", ExecutionBackend: "bubblewrap", CompletionPolicy: "repair"}},
			"study created (codex, bwrap, policy repair)"},
		{engine.EvStudyState, engine.StudyStatePayload{Status: engine.StatusPaused, Activity: "paused by the operator"}, "study paused by the operator"},
		{engine.EvStudyState, engine.StudyStatePayload{Status: engine.StatusRunning, Activity: "worker turn 3"}, "study running: worker turn 3"},
		{engine.EvStudyState, engine.StudyStatePayload{Status: engine.StatusCompleted}, "study completed"},
		{engine.EvStudyState, engine.StudyStatePayload{Status: engine.StatusCompleted, Activity: "stopped: completed"}, "study completed"},
		{engine.EvStudyState, engine.StudyStatePayload{Status: engine.StatusCompleted, Activity: "completed: every claim is resolved"},
			"study completed: every claim is resolved"},
		{engine.EvActivity, engine.ActivityPayload{Activity: "worker turn 3"}, "worker turn 3"},
		{engine.EvTurnStarted, engine.TurnStartedPayload{Role: "worker", Turn: 3}, "turn 3 started"},
		{engine.EvTurnStarted, engine.TurnStartedPayload{Role: "reviewer", Turn: 4}, "reviewer turn 4 started"},
		{engine.EvTurnEnded, engine.TurnEndedPayload{Turn: 3}, "turn 3 ended (its logs not hashed)"},
		{engine.EvTurnEnded, engine.TurnEndedPayload{Turn: 3, Logs: engine.TurnLogs{"supervisor/turn-00003/stdout.log": {}}},
			"turn 3 ended; 1 log file(s) hashed"},
		{engine.EvTurnEnded, engine.TurnEndedPayload{Turn: 4, Stopped: "paused", Logs: engine.TurnLogs{"supervisor/turn-00004/stdout.log": {}}},
			"turn 4 stopped (paused); 1 log file(s) hashed"},
		{engine.EvTurnEnded, engine.TurnEndedPayload{Turn: 1, Review: "rev_1", Stopped: "cancelled"},
			"review rev_1 attempt 1 stopped (cancelled) (its logs not hashed)"},
		{engine.EvIdleTurn, engine.IdleTurnPayload{Streak: 2}, "idle turn: nothing changed (2 in a row)"},
		{engine.EvSessionRecovery, engine.SessionRecoveryPayload{IdleStreak: 3, Recoveries: 1}, "fresh worker session after 3 idle turns (recovery 1)"},
		{engine.EvExperimentQueued, engine.ExperimentQueuedPayload{Experiment: exp, Source: "kepler.py", Args: []string{"--method", "euler"}},
			"exp_1a2b3c4d… queued: kepler.py --method euler"},
		{engine.EvExperimentStarted, engine.ExperimentStartedPayload{Experiment: exp, Backend: "proot-cooperative"}, "exp_1a2b3c4d… started in proot-coop"},
		{engine.EvExperimentFinished, engine.ExperimentFinishedPayload{Experiment: exp, Status: "succeeded", WallSeconds: ptr(0.41)}, "exp_1a2b3c4d… succeeded in 0.4 s"},
		{engine.EvExperimentFinished, engine.ExperimentFinishedPayload{Experiment: exp, Status: "failed", WallSeconds: ptr(12.0), LimitExceeded: &mem},
			"exp_1a2b3c4d… failed in 12 s (memory limit exceeded)"},
		{engine.EvExperimentFinished, engine.ExperimentFinishedPayload{Experiment: exp, Status: "cancelled", NeverRan: true}, "exp_1a2b3c4d… cancelled"},
		{engine.EvExperimentInterrupted, engine.ExperimentInterruptedPayload{Experiment: exp}, "exp_1a2b3c4d… interrupted: its supervisor stopped"},
		{engine.EvExperimentPlaced, engine.ExperimentPlacedPayload{Experiment: exp, Machine: "hpc", Job: "12", State: "queued"}, "exp_1a2b3c4d… queued on hpc as job 12"},
		{engine.EvExperimentPlaced, engine.ExperimentPlacedPayload{Experiment: exp, Machine: "hpc", Job: "12", Node: "n1", State: "running"}, "exp_1a2b3c4d… running on hpc as job 12, node n1"},
		{engine.EvExperimentCancelRequested, engine.ExperimentCancelRequestedPayload{Experiment: exp, Reason: "wrong step"}, "cancel of exp_1a2b3c4d… asked: wrong step"},
		{engine.EvClaimCommitted, engine.ClaimCommittedPayload{Claim: "claim_24b0e25f8d33", Parent: root, Statement: "Leapfrog\nconserves it."},
			"claim claim_24b0e2… committed under root: Leapfrog conserves it."},
		{engine.EvClaimStatus, engine.ClaimStatusPayload{Claim: root, Status: "falsified"}, "claim root is now falsified"},
		{engine.EvClaimRegistered, engine.ClaimRegisteredPayload{Claim: "claim_24b0e25f8d33", Kind: "instrument", Parent: root, Relation: "instrument_of", Statement: "The integrator\nis exact."},
			"instrument claim claim_24b0e2… registered (instrument_of root): The integrator is exact."},
		{engine.EvContractRegistered, engine.ContractRegisteredPayload{Claim: root, Purpose: "decision", Version: 2}, "contract v2 of root registered (decision)"},
		{engine.EvEvidenceLinked, engine.EvidenceLinkedPayload{Claim: root, ContractVersion: 2, Counts: true, Experiment: exp, Output: "result.json"},
			"exp_1a2b3c4d… linked to root under contract v2: counts"},
		{engine.EvClaimClosed, engine.ClaimClosedPayload{Claim: root, ContractVersion: 2, Reason: "the energy\ndrifts", Status: "falsified"},
			"claim root closed as falsified: the energy drifts"},
		{engine.EvReviewQueued, engine.ReviewQueuedPayload{Claim: root, Disposition: "falsified", Review: rev}, "review of root asked: falsified"},
		{engine.EvReviewRequested, engine.ReviewRequestedPayload{Claim: root, ContractVersion: 2, Review: rev, Stage: "support"}, "support review of root (contract v2) asked"},
		{engine.EvContractReviewed, engine.ContractReviewedPayload{Claim: root, ContractVersion: 2, Decision: "approved", PacketSHA256: "ab", Review: rev}, "contract v2 of root reviewed: approved"},
		{engine.EvAdjudicated, engine.AdjudicatedPayload{Claim: root, ContractVersion: 2, Decision: "sufficient", Review: rev}, "the judge found contract v2 evidence of root sufficient"},
		{engine.EvAssignmentStarted, engine.AssignmentStartedPayload{Assignment: "asg_0001", Claim: root, Role: "falsifier"}, "falsifier assigned to root"},
		{engine.EvHandoff, engine.HandoffPayload{Assignment: "asg_0001", Outcome: "falsified"}, "assignment asg_0001 handed off: falsified"},
		{engine.EvPoolUnreachable, engine.PoolUnreachablePayload{Workers: []string{"w1", "w2"}, Reason: "worker w1: connection refused"},
			"no machine of the pool can be reached (w1, w2): queued experiments wait · worker w1: connection refused"},
		{engine.EvPoolRecovered, engine.PoolRecoveredPayload{Worker: "w2"}, "worker w2 reachable again: queued experiments resume"},
		{engine.EvHandoff, engine.HandoffPayload{Assignment: "asg_0002", Forced: true, Outcome: "inconclusive"}, "assignment asg_0002 ended by the host: inconclusive"},
		{engine.EvReviewResolved, engine.ReviewResolvedPayload{Claim: root, Decision: "approved", Disposition: "falsified", NextTest: &next, Review: rev},
			"review of root: approved, falsified"},
		{engine.EvReviewFailed, engine.ReviewFailedPayload{Attempt: 2, Error: "reviewer exited 1", Review: rev}, "review rev_47ebfa35… failed (attempt 2): reviewer exited 1"},
		{engine.EvNoteAdded, engine.NoteAddedPayload{Note: engine.Note{Statement: "Euler drifts\n linearly."}}, "note: Euler drifts linearly."},
		{engine.EvSteeringQueued, engine.SteeringQueuedPayload{Chars: 42, ID: "steer_0123456789abcdef01234567"},
			"operator guidance steer_012345… queued (42 characters, advisory)"},
		{engine.EvSteeringDelivered, engine.SteeringDeliveredPayload{IDs: []string{"steer_a", "steer_b"}, Turn: 3},
			"turn 3's prompt carries operator guidance steer_a, steer_b"},
		{engine.EvControlRequested, engine.ControlRequestedPayload{Command: engine.Pause}, "the operator asked to pause"},
		{engine.EvControlRequested, engine.ControlRequestedPayload{Command: engine.Cancel, By: "agent"}, "the agent asked to cancel"},
		{engine.EvHarnessError, engine.HarnessErrorPayload{Error: "disk full", Where: "executor"}, "harness error in executor: disk full"},
		{engine.EvHarnessError, engine.HarnessErrorPayload{Error: "disk full", Consecutive: 2}, "harness error: disk full"},
		{engine.EvProviderReconnectScheduled, engine.ProviderReconnectScheduledPayload{Attempt: 2, DelaySeconds: 4}, "provider: reconnecting in 4 s (attempt 2)"},
		{engine.EvProviderReconnected, engine.ProviderReconnectedPayload{Attempts: 3}, "provider: reconnected after 3 failed attempts"},
		{engine.EvProviderNeedsAttention, engine.ProviderNeedsAttentionPayload{Attention: "log in again", Category: "auth"}, "provider needs attention: log in again"},
		{engine.EvUsage, engine.UsagePayload{InputTokens: &in, OutputTokens: &out}, "turn used 1200 input and 300 output tokens"},
		{engine.EvUsage, engine.UsagePayload{}, "turn used unknown input and unknown output tokens"},
		{engine.EvRecord, engine.RecordPayload{Kind: "experiments", ID: exp, Status: "succeeded"}, "experiments exp_1a2b3c4d… recorded (succeeded)"},
		{"provider_retry", map[string]any{"error": "HTTP 503"}, "provider_retry HTTP 503"},
		{engine.EvTurnStarted, map[string]any{"turn": "three"}, "turn_started"},
	}
	seen := map[engine.EventType]bool{}
	for _, c := range cases {
		seen[c.typ] = true
		if got := eventText(event(1, c.typ, c.payload)); got != c.want {
			t.Errorf("%s %+v:\n got %q\nwant %q", c.typ, c.payload, got, c.want)
		}
	}
	for _, typ := range engine.EventTypes() {
		if sentences[typ] == nil {
			t.Errorf("event type %s has no sentence", typ)
		}
		if !seen[typ] {
			t.Errorf("event type %s has no case in this test", typ)
		}
	}
}
