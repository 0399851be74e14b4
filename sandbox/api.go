package sandbox

import "time"

// Backend names an execution backend as recorded in receipts.
type Backend string

// The execution backends. Auto is a request only; it is never recorded.
const (
	Bubblewrap         Backend = "bubblewrap"
	ProotCooperative   Backend = "proot-cooperative"
	ProcessCooperative Backend = "process-cooperative"
	Auto               Backend = "auto"
)

// Limit names what stopped an experiment, as recorded in limit_exceeded.
const (
	LimitWallTime  = "wall_time"
	LimitCPUTime   = "cpu_time"
	LimitFileSize  = "file_size"
	LimitMemory    = "memory"
	LimitWorkspace = "workspace"
)

// SealedFile is one file copied into /work before the run and re-hashed after it.
type SealedFile struct {
	Rel      string // path relative to /work, e.g. "sim.py" or "data/x.csv"
	HostPath string // where the host reads it from (inside the campaign's research/)
	SHA256   string // hash recorded at submission; a different hash before the run is an error
}

// Spec is everything needed to run one experiment.
type Spec struct {
	Backend        Backend
	SelfExe        string            // our own binary, started in its hidden helper mode
	RunDir         string            // private scratch folder for this run; created, removed after
	ArtifactDir    string            // collected outputs, stdout.log and stderr.log go here
	Sealed         []SealedFile      // the source and inputs
	Command        []string          // argv as seen inside the sandbox (working directory /work)
	Env            map[string]string // host-chosen variables on top of the fixed clean set
	Outputs        []string          // declared outputs, relative to /work
	Timeout        time.Duration     // wall-time limit
	CPUs           int               // RLIMIT_CPU = Timeout*CPUs + 1 s
	MemoryBytes    int64             // resident-memory limit of the whole tree (watchdog)
	MaxFileBytes   int64             // RLIMIT_FSIZE and the largest collected output
	WorkspaceBytes int64             // the work and temporary folders may hold at most this much, sealed copies aside (workspace.go)
	ReadOnly       []Mount           // host folders shown read-only (e.g. capability runtimes)
	Capability     *CapabilityRef    // the capability whose runtime ReadOnly shows, if any (for a worker)
	// Usage, when set, receives the run's live figures about every
	// UsageEvery while it runs, on a goroutine of the runner's client: it
	// must return quickly and not call Run.
	Usage func(Usage) `json:"-"`
}

// Mount shows the host folder Host read-only at the absolute path Virtual
// inside the sandbox (bind mount, PRoot binding, or path translation for
// process-cooperative).
type Mount struct {
	Host    string
	Virtual string
}

// Artifact is one collected output file.
type Artifact struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// Rejected is an output that was not collected, with the reason.
type Rejected struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// How a run's limits were set before its launcher's first instruction
// (Result.Launch).
const (
	LaunchGate    = "start-gate"     // the runner's start gate set them on itself and executed the launcher (gate.go)
	LaunchPtrace  = "ptrace-stop"    // at the stop right after the launcher's exec (tracegate.go)
	LaunchBarrier = "shell-barrier"  // while a /bin/sh barrier waited on a pipe (helper.go)
	LaunchBlockFD = "bwrap-block-fd" // while bwrap held its child on --block-fd (bwrapgate.go)
)

// Result is what one run produced; the engine turns it into a receipt.
type Result struct {
	Backend         Backend
	ReturnCode      *int    // nil when killed by a signal or a limit
	Signal          *string // e.g. "SIGKILL"; nil when it exited
	TimedOut        bool
	Cancelled       bool
	LimitExceeded   string // "" or one of the Limit constants
	WallSeconds     float64
	PeakRSSBytes    *int64 // largest resident set seen; nil when none was (see docs/security.md)
	Artifacts       map[string]Artifact
	MissingOutputs  []string
	RejectedOutputs []Rejected
	InputMutations  []string
	StdoutTail      string
	StderrTail      string
	Containment     string // "cgroup" or "sampled-watchdog"
	Launch          string // how the limits were set before the launcher's first instruction: a Launch constant
	StartedAt       time.Time
	FinishedAt      time.Time

	survivors int // processes the runner could not kill (their logs are copied, never moved)
}

// Report is a probe result, as printed by doctor.
type Report struct {
	Backend          Backend `json:"backend"`
	Available        bool    `json:"available"`
	KernelIsolation  bool    `json:"kernel_isolation"`
	NetworkIsolation bool    `json:"network_isolation"`
	Reason           string  `json:"reason"`
	Remedy           string  `json:"remedy,omitempty"`
	Selected         Backend `json:"selected,omitempty"`
	FallbackReason   string  `json:"fallback_reason,omitempty"`
	Warning          string  `json:"warning,omitempty"`
}
