package slurm

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// jobFolder is one experiment's folder in the shared root.
type jobFolder struct {
	dir  string
	name string // the job key: the folder's name and the job's --job-name
}

// folderFor names the folder of key (the study and the experiment): the
// same key gives the same folder after any restart.
func (c *Cluster) folderFor(key string) jobFolder {
	sum := sha256.Sum256([]byte(key))
	name := "sj_" + hex.EncodeToString(sum[:])[:32]
	return jobFolder{dir: filepath.Join(c.cfg.Root, "jobs", name), name: name}
}

func (f jobFolder) path(name string) string { return filepath.Join(f.dir, name) }

// The files of a job folder.
const (
	specFile      = "spec.json"   // nodeSpec, written before sbatch
	scriptFile    = "job.sh"      // the batch script
	submitFile    = "submitting"  // written just before sbatch: a crash after it may have left a job
	jobIDFile     = "job_id"      // the Slurm job id, written after sbatch answered
	recordFile    = "record.json" // the job's terminal record, written by the job
	heartbeatFile = "heartbeat"   // touched by the supervisor; the job stops its experiment when it is stale
	usageFile     = "usage.json"  // the experiment's latest live figures, written by the job about once a second
	inputsDir     = "inputs"      // the staged sealed files
	outDir        = "out"         // collected outputs, stdout.log, stderr.log
)

// nodeSpec is what the job needs to run its experiment on the node.
type nodeSpec struct {
	Spec      sandbox.Spec  `json:"spec"` // SelfExe, RunDir, ArtifactDir and host paths are set on the node
	Grace     time.Duration `json:"grace"`
	Heartbeat string        `json:"heartbeat"`
}

// How a job's run was stopped before it finished on its own.
const (
	stopSignal    = "signal"    // SIGTERM from Slurm: scancel or the time limit
	stopHeartbeat = "heartbeat" // the supervisor's heartbeat went stale
)

// record is the terminal record a job writes for its experiment.
type record struct {
	Result  sandbox.Result `json:"result"`
	Job     string         `json:"job"`
	Node    string         `json:"node"`
	Stopped string         `json:"stopped,omitempty"` // "", stopSignal or stopHeartbeat
	Error   string         `json:"error,omitempty"`   // why the experiment could not run on the node
}
