package engine

import (
	"encoding/json"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// Status is the state of a study.
type Status string

// Study statuses.
const (
	StatusRunning             Status = "running"
	StatusPaused              Status = "paused"
	StatusCancelled           Status = "cancelled"
	StatusBudgetExhausted     Status = "budget_exhausted"
	StatusCompleted           Status = "completed"
	StatusPausedExternalError Status = "paused_external_error"
	StatusInterrupted         Status = "interrupted" // derived by readers, never stored

	// goOn is what the supervisor's steps return while the study should
	// not stop; it is never stored.
	goOn Status = ""
)

// ExpStatus is the state of an experiment.
type ExpStatus string

// Experiment statuses.
const (
	ExpQueued      ExpStatus = "queued"
	ExpRunning     ExpStatus = "running"
	ExpSucceeded   ExpStatus = "succeeded"
	ExpFailed      ExpStatus = "failed"
	ExpTimedOut    ExpStatus = "timed_out"
	ExpCancelled   ExpStatus = "cancelled"
	ExpInterrupted ExpStatus = "interrupted"
)

// Contract is the frozen part of a study: resuming with any of it changed is refused.
type Contract struct {
	StudyID            string            `json:"study_id"`
	Mode               string            `json:"mode"`
	AgentBackend       string            `json:"agent_backend"`
	Model              string            `json:"model"`
	JudgeModel         string            `json:"judge_model"`
	Executable         string            `json:"executable"`
	ProviderConfig     string            `json:"provider_config,omitempty"` // path of the api connection file, never its content
	ExecutionBackend   sandbox.Backend   `json:"execution_backend"`
	ExecutionProbe     sandbox.Report    `json:"execution_probe"`
	Capabilities       string            `json:"capabilities,omitempty"`
	CapabilityHashes   map[string]string `json:"capability_hashes"`
	HypothesisSHA256   string            `json:"hypothesis_sha256"`
	InstructionsSHA256 string            `json:"instructions_sha256"`
	CompletionPolicy   string            `json:"completion_policy"`
	WallSeconds        int64             `json:"wall_seconds"`
	TurnSeconds        int64             `json:"turn_seconds"`
	CreatedAt          time.Time         `json:"created_at"`
	Deadline           time.Time         `json:"deadline"`
	Continuation       *Continuation     `json:"continuation,omitempty"` // a continuation phase's parent (contract section 14)
	Workers            []FrozenWorker    `json:"workers,omitempty"`      // the pool; none means local only (pool.go)
}

// Resources is what an experiment reserves from the machine.
type Resources struct {
	CPUs      int   `json:"cpus"`
	MemoryMB  int64 `json:"memory_mb"`
	MaxFileMB int64 `json:"max_file_mb"`
}

// Receipt is the durable record of one experiment (contract section 6).
type Receipt struct {
	ID               string                      `json:"id"`
	Status           ExpStatus                   `json:"status"`
	IsolationBackend sandbox.Backend             `json:"isolation_backend"`
	Machine          string                      `json:"machine"`
	Source           string                      `json:"source"` // empty for a capability experiment
	Capability       string                      `json:"capability,omitempty"`
	CapabilitySHA256 string                      `json:"capability_sha256,omitempty"` // frozen manifest + runtime hash
	Args             []string                    `json:"args"`
	Stage            string                      `json:"stage"`
	Purpose          string                      `json:"purpose,omitempty"`
	Commitment       string                      `json:"commitment,omitempty"`
	Claim            string                      `json:"claim,omitempty"`  // structured and frontier: the claim it serves
	OpSeq            int64                       `json:"op_seq,omitempty"` // structured and frontier: the event log's head when queued
	Key              string                      `json:"key,omitempty"`
	Timeout          float64                     `json:"timeout"`
	Resources        Resources                   `json:"resources"`
	Guidance         []string                    `json:"guidance"` // steering ids that existed at submission; null on receipts older than the field
	Inputs           map[string]string           `json:"inputs"`
	Outputs          []string                    `json:"outputs"`
	Artifacts        map[string]sandbox.Artifact `json:"artifacts"`
	MissingOutputs   []string                    `json:"missing_outputs"`
	RejectedOutputs  []sandbox.Rejected          `json:"rejected_outputs"`
	InputMutations   []string                    `json:"input_mutations"`
	ReturnCode       *int                        `json:"returncode"`
	Signal           *string                     `json:"signal"`
	TimedOut         bool                        `json:"timed_out"`
	LimitExceeded    *string                     `json:"limit_exceeded"`
	WallSeconds      *float64                    `json:"wall_seconds"`
	PeakRSSBytes     *int64                      `json:"peak_rss_bytes"`
	Containment      string                      `json:"containment,omitempty"`
	StdoutTail       string                      `json:"stdout_tail"`
	StderrTail       string                      `json:"stderr_tail"`
	Logs             map[string]sandbox.Artifact `json:"logs,omitempty"` // stdout.log, stderr.log as collected
	Error            string                      `json:"error,omitempty"`
	CancelRequested  string                      `json:"cancel_requested,omitempty"`
	ArtifactDir      string                      `json:"artifact_dir"`
	Remote           *Remote                     `json:"remote,omitempty"` // where a worker ran it
	CreatedAt        time.Time                   `json:"created_at"`
	StartedAt        *time.Time                  `json:"started_at"`
	FinishedAt       *time.Time                  `json:"finished_at"`
}

// Finished reports whether the experiment has reached a final status.
func (r Receipt) Finished() bool {
	switch r.Status {
	case ExpQueued, ExpRunning:
		return false
	}
	return true
}

// Claim is the root hypothesis, a committed repair (minimal) or a claim
// of the ledger (structured and frontier).
type Claim struct {
	ID         string     `json:"id"`
	Statement  string     `json:"statement"`
	Parent     *string    `json:"parent"`
	Status     string     `json:"status"`
	Acceptance string     `json:"acceptance,omitempty"`
	Rationale  string     `json:"rationale,omitempty"`
	Source     string     `json:"source,omitempty"`
	Cases      [][]string `json:"cases,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`

	// The ledger of the structured and frontier modes (engine/ledger.go).
	Kind            ClaimKind          `json:"kind,omitempty"`
	Relation        Relation           `json:"relation,omitempty"`
	Repair          *Repair            `json:"repair,omitempty"`
	Contracts       []EvidenceContract `json:"contracts,omitempty"`
	Links           []Link             `json:"links,omitempty"`
	ClosedReason    string             `json:"closed_reason,omitempty"`
	DecisiveVersion int                `json:"decisive_contract_version,omitempty"`
	OpSeq           int64              `json:"op_seq,omitempty"`
}

// Challenge is the harder test a supported claim must survive.
type Challenge struct {
	Strategy    string   `json:"strategy"`
	Experiments []string `json:"experiments"`
	Outcome     string   `json:"outcome"`
}

// Verdict is the independent reviewer's decision.
type Verdict struct {
	ClaimID      string   `json:"claim_id"`
	Decision     string   `json:"decision"`
	Disposition  string   `json:"disposition,omitempty"` // minimal; the scientific verdicts have none
	Rationale    string   `json:"rationale"`
	EvidenceGaps []string `json:"evidence_gaps"`
	NextTest     *string  `json:"next_test"`
	// ContractVersion is the version a scientific verdict judged.
	ContractVersion int `json:"contract_version,omitempty"`
}

// Review is a request for the independent reviewer and, once resolved, its verdict.
type Review struct {
	ID           string     `json:"id"`
	Claim        string     `json:"claim"`
	Disposition  string     `json:"disposition"`
	Conclusion   string     `json:"conclusion"`
	Experiments  []string   `json:"experiments"`
	Challenge    *Challenge `json:"challenge"`
	Status       string     `json:"status"`
	Attempts     int        `json:"attempts"`
	Crashes      int        `json:"crashes,omitempty"` // attempts whose reviewer failed (exit, stream), not malformed
	Verdict      *Verdict   `json:"verdict"`
	LastError    string     `json:"last_error,omitempty"`
	PacketSHA256 string     `json:"packet_sha256,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	ResolvedAt   *time.Time `json:"resolved_at,omitempty"`

	// The reviews of the scientific modes (engine/labscience.go).
	Stage           ReviewStage `json:"stage,omitempty"`
	ContractVersion int         `json:"contract_version,omitempty"`
	Case            string      `json:"case,omitempty"`
	Assignment      string      `json:"assignment,omitempty"`
}

// Note is a short statement the agent leaves in the record. Notes recorded
// before kinds existed have none.
type Note struct {
	ID          int64     `json:"id"`
	Statement   string    `json:"statement"`
	Kind        NoteKind  `json:"kind,omitempty"`
	Experiments []string  `json:"experiments,omitempty"` // the experiments it rests on
	Supersedes  int64     `json:"supersedes,omitempty"`  // the note it corrects; that note stays
	CreatedAt   time.Time `json:"created_at"`
}

// NoteKind says what a note is.
type NoteKind string

// The note kinds, in the order the schema lists them.
const (
	NoteObservation    NoteKind = "observation"
	NoteInterpretation NoteKind = "interpretation"
	NoteQuestion       NoteKind = "question"
	NoteNextTest       NoteKind = "next_test"
	NoteImplementation NoteKind = "implementation"
)

// NoteKinds lists the note kinds.
var NoteKinds = []NoteKind{NoteObservation, NoteInterpretation, NoteQuestion, NoteNextTest, NoteImplementation}

// ProviderState is the provider-supervision part of the snapshot.
type ProviderState struct {
	RetryCount          int        `json:"retry_count"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	WaitSeconds         float64    `json:"wait_seconds"`
	FailedTurnSeconds   float64    `json:"failed_turn_seconds"`
	NextRetryAt         *time.Time `json:"next_retry_at"`
	ErrorCategory       *string    `json:"error_category"`
	Attention           *string    `json:"attention"`
}

// SupervisorState is the mutable supervisor record.
type SupervisorState struct {
	Status        Status `json:"status"`
	Activity      string `json:"activity"`
	Turn          int    `json:"turn"`
	IdleStreak    int    `json:"idle_streak"`
	HarnessErrors int    `json:"harness_errors"`
	LastError     string `json:"last_error,omitempty"`
	WorkerCursor  string `json:"worker_cursor,omitempty"`
	LastPromptSeq int64  `json:"last_prompt_seq"`
	// SessionRecoveries counts fresh sessions started after idle turns.
	SessionRecoveries int           `json:"session_recoveries"`
	Provider          ProviderState `json:"provider"`
	PID               int           `json:"pid,omitempty"`
	HeartbeatAt       *time.Time    `json:"heartbeat_at,omitempty"`
	// RecordProtection is ProtectionEnclosed or ProtectionNone, as of the
	// last supervisor start.
	RecordProtection string `json:"record_protection,omitempty"`
	// UnreachableWorkers is set while no machine of the pool can be
	// reached (pool_unreachable until pool_recovered): those workers.
	UnreachableWorkers []string `json:"unreachable_workers,omitempty"`
}

// Usage is the token total over every agent thread; unknown stays null.
type Usage struct {
	InputTokens  *int64 `json:"input_tokens"`
	OutputTokens *int64 `json:"output_tokens"`
}

// Snapshot is what `status --json` prints (contract section 6): the study's
// header, then every record. lab status gives the header with a bounded
// summary instead (StatusSummary).
type Snapshot struct {
	StudyHeader
	Experiments      []Receipt         `json:"experiments"`
	ExperimentCounts map[ExpStatus]int `json:"experiment_counts"` // by status, over the whole study
	Claims           []Claim           `json:"claims"`
	Reviews          []Review          `json:"reviews"`
	Notes            []Note            `json:"notes"`
	Steering         []Steering        `json:"steering"` // operator guidance, oldest first (at most 64)
	RecordProtection string            `json:"record_protection"`
	ScienceView                        // structured and frontier: role, assignments, contract states
}

// Event is one entry of the study's event log, as published to subscribers.
type Event struct {
	Seq     int64           `json:"seq"`
	Time    string          `json:"time"`
	Type    EventType       `json:"type"`
	Payload json.RawMessage `json:"payload"`
}
