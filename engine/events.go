package engine

import (
	"encoding/json"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// This file is the study's event vocabulary: every event type, its payload
// and the one way to append it. docs/campaign.md ("Event types") lists the
// same table; events_test.go holds the two equal. A payload's fields are in
// the order the log has always written them: by JSON name for the payloads
// that were map literals, so each event's bytes stay the same.

// EventType names an entry of the study's event log.
type EventType string

// The event types.
const (
	EvStudyCreated               EventType = "study_created"
	EvStudyState                 EventType = "study_state"
	EvActivity                   EventType = "activity"
	EvTurnStarted                EventType = "turn_started"
	EvTurnEnded                  EventType = "turn_ended"
	EvIdleTurn                   EventType = "idle_turn"
	EvSessionRecovery            EventType = "session_recovery"
	EvExperimentQueued           EventType = "experiment_queued"
	EvExperimentStarted          EventType = "experiment_started"
	EvExperimentFinished         EventType = "experiment_finished"
	EvExperimentInterrupted      EventType = "experiment_interrupted"
	EvExperimentCancelRequested  EventType = "experiment_cancel_requested"
	EvExperimentPlaced           EventType = "experiment_placed"
	EvClaimCommitted             EventType = "claim_committed"
	EvClaimStatus                EventType = "claim_status"
	EvReviewQueued               EventType = "review_queued"
	EvReviewResolved             EventType = "review_resolved"
	EvReviewFailed               EventType = "review_failed"
	EvNoteAdded                  EventType = "note_added"
	EvControlRequested           EventType = "control_requested"
	EvHarnessError               EventType = "harness_error"
	EvProviderReconnectScheduled EventType = "provider_reconnect_scheduled"
	EvProviderReconnected        EventType = "provider_reconnected"
	EvProviderNeedsAttention     EventType = "provider_needs_attention"
	EvUsage                      EventType = "usage"
	EvRecord                     EventType = "record"
	EvClaimRegistered            EventType = "claim_registered"
	EvContractRegistered         EventType = "contract_registered"
	EvEvidenceLinked             EventType = "evidence_linked"
	EvClaimClosed                EventType = "claim_closed"
	EvSteeringQueued             EventType = "steering_queued"
	EvSteeringDelivered          EventType = "steering_delivered"
	EvReviewRequested            EventType = "review_requested"
	EvContractReviewed           EventType = "contract_reviewed"
	EvAdjudicated                EventType = "adjudicated"
	EvAssignmentStarted          EventType = "assignment_started"
	EvHandoff                    EventType = "handoff"
	EvPoolUnreachable            EventType = "pool_unreachable"
	EvPoolRecovered              EventType = "pool_recovered"
)

// EventTypes lists every event type, in the order of the constants above
// (events_test.go holds it equal to the payload types).
func EventTypes() []EventType {
	return []EventType{
		EvStudyCreated, EvStudyState, EvActivity, EvTurnStarted, EvTurnEnded, EvIdleTurn, EvSessionRecovery,
		EvExperimentQueued, EvExperimentStarted, EvExperimentFinished, EvExperimentInterrupted,
		EvExperimentCancelRequested, EvExperimentPlaced, EvClaimCommitted, EvClaimStatus, EvReviewQueued, EvReviewResolved,
		EvReviewFailed, EvNoteAdded, EvControlRequested, EvHarnessError, EvProviderReconnectScheduled,
		EvProviderReconnected, EvProviderNeedsAttention, EvUsage, EvRecord,
		EvClaimRegistered, EvContractRegistered, EvEvidenceLinked, EvClaimClosed,
		EvSteeringQueued, EvSteeringDelivered,
		EvReviewRequested, EvContractReviewed, EvAdjudicated, EvAssignmentStarted, EvHandoff,
		EvPoolUnreachable, EvPoolRecovered,
	}
}

// payload is an event's body; its type decides the event type.
type payload interface{ eventType() EventType }

// appendEvent adds p to the log under its own event type. It is the only
// caller of store.Tx.Append in this package.
func appendEvent(tx *store.Tx, p payload) error {
	_, err := tx.Append(string(p.eventType()), p)
	return err
}

// StudyCreatedPayload is the frozen contract of a new study.
type StudyCreatedPayload struct{ Contract }

// StudyStatePayload says the study's status changed.
type StudyStatePayload struct {
	Activity string `json:"activity"`
	Status   Status `json:"status"`
	// ReportFormat is the report format of the binary that writes the
	// reports after this change (verify reads it; none before session 10).
	ReportFormat int `json:"report_format,omitempty"`
}

// ActivityPayload is what the supervisor does now.
type ActivityPayload struct {
	Activity string `json:"activity"`
}

// TurnStartedPayload opens an agent turn.
type TurnStartedPayload struct {
	Role string `json:"role"`
	Turn int    `json:"turn"`
}

// TurnEndedPayload closes a worker turn whose agent has stopped: Logs
// are the hashes of its folder's files (turnlogs.go), nil when they were
// not recorded (a process of the turn outlived it). A turn the study's
// pause, cancel or deadline stopped names that status in Stopped; a review
// attempt stopped so (before it had an outcome to record its logs in)
// names its review in Review.
type TurnEndedPayload struct {
	Logs    TurnLogs `json:"logs,omitempty"`
	Turn    int      `json:"turn"`
	Stopped string   `json:"stopped,omitempty"`
	Review  string   `json:"review,omitempty"`
}

// IdleTurnPayload is a worker turn that changed nothing.
type IdleTurnPayload struct {
	Streak int `json:"streak"`
}

// SessionRecoveryPayload is a fresh worker session after idle turns.
type SessionRecoveryPayload struct {
	IdleStreak int `json:"idle_streak"`
	Recoveries int `json:"recoveries"`
}

// ExperimentQueuedPayload is an experiment the agent asked for.
type ExperimentQueuedPayload struct {
	Args       []string `json:"args"`
	Experiment string   `json:"experiment"`
	Source     string   `json:"source"`
}

// ExperimentStartedPayload is an experiment handed to its backend.
type ExperimentStartedPayload struct {
	Backend    sandbox.Backend `json:"backend"`
	Experiment string          `json:"experiment"`
}

// ExperimentFinishedPayload is an experiment's final status. One that
// never ran (cancelled while queued) has no wall_seconds or limit_exceeded.
type ExperimentFinishedPayload struct {
	Experiment    string    `json:"experiment"`
	LimitExceeded *string   `json:"limit_exceeded"`
	Status        ExpStatus `json:"status"`
	WallSeconds   *float64  `json:"wall_seconds"`
	NeverRan      bool      `json:"-"`
}

// MarshalJSON leaves out what an experiment that never ran cannot have.
func (p ExperimentFinishedPayload) MarshalJSON() ([]byte, error) {
	type plain ExperimentFinishedPayload
	if !p.NeverRan {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		Experiment string    `json:"experiment"`
		Status     ExpStatus `json:"status"`
	}{p.Experiment, p.Status})
}

// ExperimentInterruptedPayload is an experiment a dead supervisor left running.
type ExperimentInterruptedPayload struct {
	Experiment string `json:"experiment"`
}

// ExperimentPlacedPayload says where a running experiment stands on a
// worker that reports it (a Slurm job queued, then running on its node).
type ExperimentPlacedPayload struct {
	Experiment string `json:"experiment"`
	Job        string `json:"job"`
	Machine    string `json:"machine"`
	Node       string `json:"node"`
	State      string `json:"state"`
}

// ExperimentCancelRequestedPayload is the agent's cancel of an experiment.
type ExperimentCancelRequestedPayload struct {
	Experiment string `json:"experiment"`
	Reason     string `json:"reason"`
}

// ClaimCommittedPayload is a repair committed under its parent claim.
type ClaimCommittedPayload struct {
	Claim     string `json:"claim"`
	Parent    string `json:"parent"`
	Statement string `json:"statement"`
}

// ClaimStatusPayload is a claim's new status after an approved review.
type ClaimStatusPayload struct {
	Claim  string `json:"claim"`
	Status string `json:"status"`
}

// ReviewQueuedPayload is a request for the independent reviewer.
type ReviewQueuedPayload struct {
	Claim       string `json:"claim"`
	Disposition string `json:"disposition"`
	Review      string `json:"review"`
}

// ReviewResolvedPayload is the reviewer's verdict.
type ReviewResolvedPayload struct {
	Claim       string   `json:"claim"`
	Decision    string   `json:"decision"`
	Disposition string   `json:"disposition"`
	Logs        TurnLogs `json:"logs,omitempty"` // the attempt's folder; absent: not recorded
	NextTest    *string  `json:"next_test"`
	Rationale   string   `json:"rationale"`
	Review      string   `json:"review"`
}

// ReviewFailedPayload is a failed review attempt.
type ReviewFailedPayload struct {
	Attempt int      `json:"attempt"`
	Error   string   `json:"error"`
	Logs    TurnLogs `json:"logs,omitempty"` // the attempt's folder, when the reviewer ran and stopped
	Review  string   `json:"review"`
}

// NoteAddedPayload is a note the agent left.
type NoteAddedPayload struct{ Note }

// ControlRequestedPayload is a pause or cancel request to a live
// supervisor. By is "agent" when a process of an agent's enclosure asked
// (over the lab socket, from a nested pid namespace); empty when the
// request came from outside every enclosure (the operator, or an agent that
// is not enclosed).
type ControlRequestedPayload struct {
	Command Command `json:"command"`
	By      string  `json:"by,omitempty"`
}

// HarnessErrorPayload is a failure of the harness itself: the
// supervisor's carry the count in a row, the executor's say where.
type HarnessErrorPayload struct {
	Consecutive int    `json:"consecutive,omitempty"`
	Error       string `json:"error"`
	Where       string `json:"where,omitempty"`
}

// ProviderReconnectScheduledPayload is a retry after a provider failure.
type ProviderReconnectScheduledPayload struct {
	Attempt      int       `json:"attempt"`
	Deadline     time.Time `json:"deadline"`
	DelaySeconds float64   `json:"delay_seconds"`
	Error        string    `json:"error"`
}

// ProviderReconnectedPayload is a good turn after failed ones.
type ProviderReconnectedPayload struct {
	Attempts int `json:"attempts"`
}

// ProviderNeedsAttentionPayload stops the study for the operator.
type ProviderNeedsAttentionPayload struct {
	Attention string `json:"attention"`
	Category  string `json:"category"`
}

// UsagePayload is the tokens one agent turn used.
type UsagePayload struct {
	InputTokens  *int64 `json:"input_tokens"`
	OutputTokens *int64 `json:"output_tokens"`
	Thread       string `json:"thread"`
}

// RecordPayload is appended with every write of a receipt, claim or
// review: it chains the document's hash into the event log, so verify can
// tell a row rewritten outside the harness.
type RecordPayload struct {
	Kind   store.Kind `json:"kind"`
	ID     string     `json:"id"`
	Status string     `json:"status"`
	SHA256 string     `json:"sha256"`
}

// ClaimRegisteredPayload is a claim of the ledger (structured, frontier).
type ClaimRegisteredPayload struct {
	Claim     string    `json:"claim"`
	Kind      ClaimKind `json:"kind"`
	Parent    string    `json:"parent"`
	Relation  Relation  `json:"relation"`
	Statement string    `json:"statement"`
}

// ContractRegisteredPayload is a new version of a claim's evidence contract.
type ContractRegisteredPayload struct {
	Claim   string          `json:"claim"`
	Purpose ContractPurpose `json:"purpose"`
	Version int             `json:"version"`
}

// EvidenceLinkedPayload is a run's output linked to a claim.
type EvidenceLinkedPayload struct {
	Claim           string `json:"claim"`
	ContractVersion int    `json:"contract_version"`
	Counts          bool   `json:"counts"`
	Experiment      string `json:"experiment"`
	Output          string `json:"output"`
}

// ClaimClosedPayload is a claim of the ledger closed through the gate.
type ClaimClosedPayload struct {
	Claim           string      `json:"claim"`
	ContractVersion int         `json:"contract_version"`
	Reason          string      `json:"reason"`
	Status          ClaimStatus `json:"status"`
}

func (StudyCreatedPayload) eventType() EventType               { return EvStudyCreated }
func (StudyStatePayload) eventType() EventType                 { return EvStudyState }
func (ActivityPayload) eventType() EventType                   { return EvActivity }
func (TurnStartedPayload) eventType() EventType                { return EvTurnStarted }
func (TurnEndedPayload) eventType() EventType                  { return EvTurnEnded }
func (IdleTurnPayload) eventType() EventType                   { return EvIdleTurn }
func (SessionRecoveryPayload) eventType() EventType            { return EvSessionRecovery }
func (ExperimentQueuedPayload) eventType() EventType           { return EvExperimentQueued }
func (ExperimentStartedPayload) eventType() EventType          { return EvExperimentStarted }
func (ExperimentFinishedPayload) eventType() EventType         { return EvExperimentFinished }
func (ExperimentInterruptedPayload) eventType() EventType      { return EvExperimentInterrupted }
func (ExperimentCancelRequestedPayload) eventType() EventType  { return EvExperimentCancelRequested }
func (ExperimentPlacedPayload) eventType() EventType           { return EvExperimentPlaced }
func (ClaimCommittedPayload) eventType() EventType             { return EvClaimCommitted }
func (ClaimStatusPayload) eventType() EventType                { return EvClaimStatus }
func (ReviewQueuedPayload) eventType() EventType               { return EvReviewQueued }
func (ReviewResolvedPayload) eventType() EventType             { return EvReviewResolved }
func (ReviewFailedPayload) eventType() EventType               { return EvReviewFailed }
func (NoteAddedPayload) eventType() EventType                  { return EvNoteAdded }
func (ControlRequestedPayload) eventType() EventType           { return EvControlRequested }
func (HarnessErrorPayload) eventType() EventType               { return EvHarnessError }
func (ProviderReconnectScheduledPayload) eventType() EventType { return EvProviderReconnectScheduled }
func (ProviderReconnectedPayload) eventType() EventType        { return EvProviderReconnected }
func (ProviderNeedsAttentionPayload) eventType() EventType     { return EvProviderNeedsAttention }
func (UsagePayload) eventType() EventType                      { return EvUsage }
func (RecordPayload) eventType() EventType                     { return EvRecord }
func (ClaimRegisteredPayload) eventType() EventType            { return EvClaimRegistered }
func (ContractRegisteredPayload) eventType() EventType         { return EvContractRegistered }
func (EvidenceLinkedPayload) eventType() EventType             { return EvEvidenceLinked }
func (ClaimClosedPayload) eventType() EventType                { return EvClaimClosed }

// SteeringQueuedPayload is a message of operator guidance, queued.
type SteeringQueuedPayload struct {
	Chars      int    `json:"chars"`
	ID         string `json:"id"`
	RequestKey string `json:"request_key,omitempty"`
	SHA256     string `json:"sha256"` // of the text
	// ReportFormat is the report format of the binary that queued it,
	// which rewrites the reports when no supervisor runs (since session 10).
	ReportFormat int `json:"report_format,omitempty"`
}

// SteeringDeliveredPayload is the guidance a worker prompt carried first.
type SteeringDeliveredPayload struct {
	IDs  []string `json:"ids"`
	Turn int      `json:"turn"`
}

func (SteeringQueuedPayload) eventType() EventType    { return EvSteeringQueued }
func (SteeringDeliveredPayload) eventType() EventType { return EvSteeringDelivered }

// ReviewRequestedPayload is a contract review or a support adjudication
// asked of the host (structured, frontier).
type ReviewRequestedPayload struct {
	Claim           string      `json:"claim"`
	ContractVersion int         `json:"contract_version"`
	Review          string      `json:"review"`
	Stage           ReviewStage `json:"stage"`
}

// ContractReviewedPayload is a contract review's decision, keyed to the
// hash of the packet it judged.
type ContractReviewedPayload struct {
	Claim           string           `json:"claim"`
	ContractVersion int              `json:"contract_version"`
	Decision        ApprovalDecision `json:"decision"`
	Logs            TurnLogs         `json:"logs,omitempty"` // the attempt's folder; absent: not recorded
	PacketSHA256    string           `json:"packet_sha256"`
	Review          string           `json:"review"`
}

// AdjudicatedPayload is the judge's accepted verdict on a support request.
type AdjudicatedPayload struct {
	Claim           string   `json:"claim"`
	ContractVersion int      `json:"contract_version"`
	Decision        string   `json:"decision"`
	Logs            TurnLogs `json:"logs,omitempty"` // the attempt's folder; absent: not recorded
	Review          string   `json:"review"`
}

// AssignmentStartedPayload is a role assigned to a claim by the host.
type AssignmentStartedPayload struct {
	Assignment string `json:"assignment"`
	Claim      string `json:"claim"`
	Role       Role   `json:"role"`
}

// HandoffPayload is an assignment ended by its handoff.
type HandoffPayload struct {
	Assignment string `json:"assignment"`
	Forced     bool   `json:"forced"`
	Outcome    string `json:"outcome"`
}

func (ReviewRequestedPayload) eventType() EventType   { return EvReviewRequested }
func (ContractReviewedPayload) eventType() EventType  { return EvContractReviewed }
func (AdjudicatedPayload) eventType() EventType       { return EvAdjudicated }
func (AssignmentStartedPayload) eventType() EventType { return EvAssignmentStarted }
func (HandoffPayload) eventType() EventType           { return EvHandoff }

// PoolUnreachablePayload says no machine of the study's pool can be
// reached: queued experiments wait. Reason is the first worker's error.
type PoolUnreachablePayload struct {
	Reason  string   `json:"reason"`
	Workers []string `json:"workers"`
}

// PoolRecoveredPayload says a machine of the pool can be reached again.
type PoolRecoveredPayload struct {
	Worker string `json:"worker"`
}

func (PoolUnreachablePayload) eventType() EventType { return EvPoolUnreachable }
func (PoolRecoveredPayload) eventType() EventType   { return EvPoolRecovered }
