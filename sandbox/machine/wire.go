package machine

import (
	"encoding/json"
	"os"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// The operations of the worker protocol.
const (
	opHello  = "hello"  // helloArgs → helloReply
	opCreate = "create" // JobRequest → createReply (idempotent by id)
	opPut    = "put"    // putArgs + data frames → blobReply on the final frame
	opStart  = "start"  // jobArgs → JobState (idempotent)
	opWait   = "wait"   // jobArgs → JobState once the job ended
	opStatus = "status" // jobArgs → JobState
	opCancel = "cancel" // cancelArgs → JobState
	opFetch  = "fetch"  // fetchArgs → data frames, the last with fetchReply
	// opCapability installs a capability under ROOT/capabilities from blobs
	// already put: capabilityArgs → capabilityReply (capabilities.go).
	opCapability = "capability"
	opReply      = "reply"
)

// Job statuses on the worker.
const (
	jobStaged   = "staged"   // created, inputs arriving
	jobRunning  = "running"  // started
	jobFinished = "finished" // Result holds the outcome
	jobLost     = "lost"     // the worker lost it (Reason says why)
	jobNotFound = "not_found"
)

type helloArgs struct {
	Protocol string          `json:"protocol"`
	Backend  sandbox.Backend `json:"backend"`
}

type helloReply struct {
	Protocol  string         `json:"protocol"`
	Host      string         `json:"host"`
	UID       int            `json:"uid"`
	Clock     time.Time      `json:"clock"`
	Backend   sandbox.Report `json:"backend"`
	CPUs      int            `json:"cpus"`
	BinarySHA string         `json:"binary_sha256"`
	// Capabilities are the capability manifests the worker can run, by
	// name, with their hashes: those shipped by `worker prepare
	// --capabilities` whose runtime still hashes as shipped. The
	// coordinator places a capability experiment only where the hash
	// matches (engine/poolcaps.go).
	Capabilities map[string]string `json:"capabilities"`
}

// Input is one sealed file of a job, named by its hash.
type Input struct {
	Rel    string `json:"rel"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// JobRequest is one experiment as the worker runs it.
type JobRequest struct {
	ID             string            `json:"id"`
	Backend        sandbox.Backend   `json:"backend"`
	Command        []string          `json:"command"`
	Env            map[string]string `json:"env"`
	Outputs        []string          `json:"outputs"`
	Inputs         []Input           `json:"inputs"`
	TimeoutSeconds float64           `json:"timeout_seconds"`
	CPUs           int               `json:"cpus"`
	MemoryBytes    int64             `json:"memory_bytes"`
	MaxFileBytes   int64             `json:"max_file_bytes"`
	WorkspaceBytes int64             `json:"workspace_bytes"`
	// Capability is the shipped capability the job runs (its runtime
	// shown read-only at sandbox.CapabilityRoot/NAME from the worker's own
	// copy); nil for a job without one.
	Capability *sandbox.CapabilityRef `json:"capability,omitempty"`
}

// capabilityArgs ship one capability: its manifest as hashed and the files
// of its runtime, each already put as a blob.
type capabilityArgs struct {
	Name     string          `json:"name"`
	Hash     string          `json:"hash"`
	Manifest json.RawMessage `json:"manifest"`
	Files    []capFile       `json:"files"`
}

// capFile is one file of a capability's runtime.
type capFile struct {
	Rel    string      `json:"rel"`
	SHA256 string      `json:"sha256"`
	Bytes  int64       `json:"bytes"`
	Mode   os.FileMode `json:"mode"`
}

// Outcomes of opCapability.
const (
	capPresent   = "present"   // installed already with that hash: nothing copied
	capMissing   = "missing"   // put Missing, then ask again
	capInstalled = "installed" // made from the blobs and hash-checked
)

type capabilityReply struct {
	Status  string      `json:"status"`
	Missing []blobState `json:"missing,omitempty"`
	Modes   int         `json:"modes,omitempty"` // installed: files whose executable bit differed on the worker
}

type createReply struct {
	State   JobState    `json:"state"`
	Missing []blobState `json:"missing"` // inputs the worker lacks, with the bytes it has
}

type blobState struct {
	SHA256 string `json:"sha256"`
	Have   int64  `json:"have"`
}

type putArgs struct {
	SHA256 string `json:"sha256"`
	Offset int64  `json:"offset"`
}

type blobReply struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

type jobArgs struct {
	ID string `json:"id"`
}

type cancelArgs struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

type fetchArgs struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type fetchReply struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// JobState is a job as the worker knows it.
type JobState struct {
	ID     string                      `json:"id"`
	Status string                      `json:"status"`
	Reason string                      `json:"reason,omitempty"`
	Result *sandbox.Result             `json:"result,omitempty"`
	Files  map[string]sandbox.Artifact `json:"files,omitempty"` // the artifact folder: outputs and logs
	PIDs   []int                       `json:"pids,omitempty"`
	// Usage is a running job's latest live figures, as its watchdog
	// sampled them (about once a second, sandbox.UsageEvery); nil before
	// the first and once the job ended. Live only: never in state.json.
	Usage *sandbox.Usage `json:"usage,omitempty"`
	// Collected: the coordinator fetched the outputs and the worker removed
	// the job's folder (collect.go).
	Collected bool `json:"collected,omitempty"`
}
