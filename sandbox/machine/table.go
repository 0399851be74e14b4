package machine

import (
	"context"
	"fmt"
	"strings"

	"github.com/simjecture/simjecture/sandbox"
)

// Kind names a kind of machine, as stored in a profile.
type Kind string

// The kinds of machine.
const (
	KindLocal Kind = "local"
	KindSSH   Kind = "ssh"
	KindSlurm Kind = "slurm"
)

// Machine runs experiments: this host, or a worker.
type Machine interface {
	// ID is the worker id ("local" for this host).
	ID() string
	// Run runs one experiment (job is its experiment id, which makes the
	// request idempotent) and collects its outputs into spec.ArtifactDir.
	// An error means the harness could not run it; a lost experiment is
	// ErrLost.
	Run(ctx context.Context, job string, spec sandbox.Spec) (sandbox.Result, Remote, error)
	// Reachable reports whether the machine can take a new experiment now.
	Reachable(ctx context.Context) error
	// Close ends the machine's connection, leaving nothing running.
	Close() error
}

// Remote is where a remote run happened, for the receipt.
type Remote struct {
	Host      string `json:"host,omitempty"`
	Scheduler string `json:"scheduler,omitempty"` // "slurm" for a Slurm job
	Job       string `json:"job"`
	Node      string `json:"node,omitempty"`
	State     string `json:"state,omitempty"` // while it runs, on a worker that reports it: queued or running
}

// Watcher is a Machine that reports where a run stands before it ends (a
// Slurm job queued, then running on its node); report is called from the
// run's goroutine with the run's remote.
type Watcher interface {
	RunWatched(ctx context.Context, job string, spec sandbox.Spec, report func(Remote)) (sandbox.Result, Remote, error)
}

// Forgetter is a machine that keeps a job's files after Run returned (a
// Slurm job's folder in SHARED_DIR, which a restarted supervisor re-attaches
// to): the host calls Forget once the experiment's final receipt is
// recorded, and the machine drops them.
type Forgetter interface {
	Forget(ctx context.Context, job string) error
}

// Options are what a machine needs from the host.
type Options struct {
	SelfExe   string // this binary
	ConfigDir string // $SIMJECTURE_CONFIG
}

// KindInfo is one row of the machines table: a kind's checks, its
// constructor and its operator commands.
type KindInfo struct {
	Kind    Kind
	Summary string
	// Remote is false only for this host.
	Remote bool
	// Check validates a profile of this kind field by field.
	Check func(Profile) error
	// Open builds the machine of a profile.
	Open func(Profile, Options) (Machine, error)
	// Prepare readies the worker (ships the binary, provisions accounts),
	// writing progress to log.
	Prepare func(ctx context.Context, p Profile, o Options, log func(string)) error
	// Probe connects and reports the worker's readiness.
	Probe func(ctx context.Context, p Profile, o Options) (CheckReport, error)
	// State is doctor's line about the worker: it connects, runs nothing.
	State func(ctx context.Context, p Profile, o Options) (string, bool)
	// Ship ships capabilities to the worker (`worker prepare
	// --capabilities`), writing one line per capability to log; with none
	// it ships nothing and refuses only a kind that cannot take them.
	Ship func(ctx context.Context, p Profile, o Options, caps []Capability, log func(string)) error
}

// kindTable is every kind of machine. Adding one is a row here plus its own
// files (slurm.go and the sandbox/slurm package for the Slurm row).
var kindTable = []KindInfo{
	{
		Kind: KindLocal, Summary: "this host",
		Check: checkLocal, Open: openLocal,
		Prepare: func(context.Context, Profile, Options, func(string)) error { return nil },
		Probe:   probeLocal, State: stateLocal, Ship: shipLocal,
	},
	{
		Kind: KindSSH, Summary: "a machine reached with the system OpenSSH client", Remote: true,
		Check: checkCommon, Open: openSSH, Prepare: prepareSSH, Probe: probeSSH, State: stateSSH, Ship: shipSSH,
	},
	{
		Kind: KindSlurm, Summary: "a Slurm cluster: one experiment, one batch job", Remote: true,
		Check: checkSlurm, Open: openSlurm, Prepare: prepareSlurm, Probe: probeSlurm, State: stateSlurm, Ship: shipSlurm,
	},
}

// Kinds returns the machines table (a copy).
func Kinds() []KindInfo { return append([]KindInfo(nil), kindTable...) }

// Describe returns the row of kind k.
func Describe(k Kind) (KindInfo, error) {
	for _, info := range kindTable {
		if info.Kind == k {
			return info, nil
		}
	}
	names := make([]string, 0, len(kindTable))
	for _, info := range kindTable {
		names = append(names, string(info.Kind))
	}
	return KindInfo{}, fmt.Errorf("unknown machine kind %q (one of %s): %w", k, strings.Join(names, ", "), ErrInvalid)
}

// Validate checks p against its kind's row.
func Validate(p Profile) error {
	info, err := Describe(p.Kind)
	if err != nil {
		return err
	}
	return info.Check(p)
}

// Open builds the machine of p.
func Open(p Profile, o Options) (Machine, error) {
	info, err := Describe(p.Kind)
	if err != nil {
		return nil, err
	}
	if err := info.Check(p); err != nil {
		return nil, err
	}
	return info.Open(p, o)
}
