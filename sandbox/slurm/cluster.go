package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// Defaults of a Config.
const (
	// DefaultGrace is how old the supervisor's heartbeat may be before a job
	// stops its experiment (contract section 13).
	DefaultGrace = 120 * time.Second
	// DefaultTimeMargin is added to an experiment's timeout for --time, so
	// the runner's own wall-time limit acts first.
	DefaultTimeMargin = 60 * time.Second
	// EnvTimeMargin overrides DefaultTimeMargin (a Go duration; tests make it
	// negative so a job meets its own --time before the runner's limit).
	EnvTimeMargin = "SIMJECTURE_SLURM_TIME_MARGIN"
	// Scheduler is the remote.scheduler of a receipt.
	Scheduler = "slurm"
)

// Config describes one Slurm machine.
type Config struct {
	Worker     string          // the worker id (a receipt's machine)
	Partition  string          // --partition; "" = the cluster's default
	Account    string          // --account; "" = the user's default
	Root       string          // SHARED_DIR: absolute, the same path on every node
	Backend    sandbox.Backend // the study's execution backend, probed on the node
	Self       string          // this binary; shipped to Root/bin/simjecture-<sha256>
	Grace      time.Duration   // heartbeat grace; 0 = DefaultGrace
	TimeMargin time.Duration   // added to the timeout for --time; 0 = DefaultTimeMargin
	RecordLag  time.Duration   // how long a record may lag its job's end; 0 = 5 s
	Exec       Commander       // runs the Slurm clients; nil = this host's
	Files      Files           // reaches Root; nil = mounted on this host
}

// Commander runs one Slurm client command (sbatch, squeue, sacct, scancel,
// sinfo) where the cluster is reached: this host, or a login node.
type Commander interface {
	Output(ctx context.Context, name string, args ...string) (string, error)
}

// Local runs the Slurm clients of this host with Env (nil: ours).
type Local struct{ Env []string }

// Output runs name with args and returns its standard output; an error
// carries the command's standard error.
func (l Local) Output(ctx context.Context, name string, args ...string) (string, error) {
	prog, err := sandbox.SystemProgram(name) // the system's first: an agent may write a folder early on PATH
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = l.Env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Cluster runs experiments on one Slurm machine.
type Cluster struct {
	cfg  Config
	poll *poller

	binOnce sync.Once
	bin     string
	binErr  error
}

// ErrConfig is returned by New for an unusable Config.
var ErrConfig = errors.New("slurm worker")

// New checks cfg and returns its cluster.
func New(cfg Config) (*Cluster, error) {
	if !filepath.IsAbs(cfg.Root) || filepath.Clean(cfg.Root) == "/" {
		return nil, fmt.Errorf("%w: root must be an absolute dedicated folder, got %q", ErrConfig, cfg.Root)
	}
	if _, ok := sandbox.Describe(cfg.Backend); !ok {
		return nil, fmt.Errorf("%w: %w %q", ErrConfig, sandbox.ErrUnknownBackend, cfg.Backend)
	}
	if cfg.Self == "" {
		return nil, fmt.Errorf("%w: no binary to ship", ErrConfig)
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.TimeMargin == 0 {
		cfg.TimeMargin = DefaultTimeMargin
		if v := os.Getenv(EnvTimeMargin); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, fmt.Errorf("%w: $%s: %w", ErrConfig, EnvTimeMargin, err)
			}
			cfg.TimeMargin = d
		}
	}
	if cfg.RecordLag <= 0 {
		cfg.RecordLag = 5 * time.Second
	}
	if cfg.Exec == nil {
		cfg.Exec = Local{}
	}
	if cfg.Files == nil {
		cfg.Files = LocalFiles{}
	}
	c := &Cluster{cfg: cfg}
	c.poll = newPoller(c)
	return c, nil
}

// binary ships the supervisor's binary to Root/bin/simjecture-<sha256> once per
// process (an existing copy with that hash is kept) and returns its path;
// the name, simjecture-<sha256>, is the SSH workers' too.
func (c *Cluster) binary() (string, error) {
	c.binOnce.Do(func() { c.bin, c.binErr = shipBinary(c.cfg.Files, c.cfg.Self, filepath.Join(c.cfg.Root, "bin")) })
	return c.bin, c.binErr
}

func shipBinary(files Files, self, dir string) (string, error) {
	sum, _, err := sandbox.HashFile(self)
	if err != nil {
		return "", fmt.Errorf("ship binary: %w", err)
	}
	dst := filepath.Join(dir, "simjecture-"+sum)
	if got, err := files.Sum(dst); err == nil && got == sum {
		return dst, nil
	}
	if err := files.Put(self, dst, 0o755, sum); err != nil {
		return "", fmt.Errorf("ship binary: %w", err)
	}
	return dst, nil
}
