package machine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/simjecture/simjecture/sandbox"
)

// ErrInvalid marks a profile that fails validation; its message names the field.
var ErrInvalid = errors.New("invalid worker profile")

// LocalID is the id of this host.
const LocalID = "local"

// DefaultOrphanGrace is how long, in seconds, a worker keeps experiments
// running without a coordinator session before it stops them.
const DefaultOrphanGrace = 120

// Profile is one worker's configuration, stored as workers/ID.json.
type Profile struct {
	ID               string          `json:"id"`
	Kind             Kind            `json:"kind"`
	Host             string          `json:"host,omitempty"`
	Port             int             `json:"port,omitempty"`
	User             string          `json:"user,omitempty"`
	IdentityFile     string          `json:"identity_file,omitempty"`
	KnownHosts       string          `json:"known_hosts,omitempty"`
	RunAs            string          `json:"run_as,omitempty"`
	Root             string          `json:"root,omitempty"`
	ExecutionBackend sandbox.Backend `json:"execution_backend"`
	CPUs             int             `json:"cpus"`
	MemoryMB         int64           `json:"memory_mb"`
	MaxJobs          int             `json:"max_jobs"`
	// Partition and Account are a Slurm worker's --partition and --account
	// ("" = the cluster's defaults).
	Partition string `json:"partition,omitempty"`
	Account   string `json:"account,omitempty"`
	// OrphanGrace is the worker's grace, in seconds, before it stops
	// experiments no coordinator is attached to (default 120).
	OrphanGrace int `json:"orphan_grace_seconds,omitempty"`
}

var (
	idPattern      = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)
	hostPattern    = regexp.MustCompile(`^[A-Za-z0-9_.:\[\]-]{1,253}$`)
	accountPattern = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	userPattern    = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	rootPattern    = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)
)

// fieldError is a validation failure naming the profile field (as its flag).
func fieldError(field, format string, a ...any) error {
	return fmt.Errorf("--%s: %s: %w", field, fmt.Sprintf(format, a...), ErrInvalid)
}

// CheckID validates a worker id.
func CheckID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("worker id %q must match ^[a-z][a-z0-9-]{0,39}$: %w", id, ErrInvalid)
	}
	return nil
}

// checkCommon validates the fields every remote kind shares.
func checkCommon(p Profile) error {
	checks := []func(Profile) error{checkIDField, checkHost, checkPort, checkAccounts, checkRoot, checkCapacity, checkBackend}
	for _, c := range checks {
		if err := c(p); err != nil {
			return err
		}
	}
	return nil
}

func checkIDField(p Profile) error {
	if err := CheckID(p.ID); err != nil {
		return err
	}
	if p.ID == LocalID {
		return fmt.Errorf("worker id %q is this host and cannot be added: %w", p.ID, ErrInvalid)
	}
	return nil
}

func checkHost(p Profile) error {
	switch {
	case p.Host == "":
		return fieldError("host", "required")
	case strings.HasPrefix(p.Host, "-"):
		return fieldError("host", "%q must not start with '-'", p.Host)
	case !hostPattern.MatchString(p.Host):
		return fieldError("host", "%q is not a host name, address or ssh alias", p.Host)
	}
	return nil
}

func checkPort(p Profile) error {
	if p.Port < 1 || p.Port > 65535 {
		return fieldError("port", "%d is outside 1-65535", p.Port)
	}
	return nil
}

func checkAccounts(p Profile) error {
	if p.User != "" && (!userPattern.MatchString(p.User) || strings.HasPrefix(p.User, "-")) {
		return fieldError("user", "%q is not an account name", p.User)
	}
	if p.RunAs != "" && (!accountPattern.MatchString(p.RunAs) || p.RunAs == "root") {
		return fieldError("run-as", "%q is not a non-root account name (^[a-z_][a-z0-9_-]{0,31}$)", p.RunAs)
	}
	for field, f := range map[string]string{"identity-file": p.IdentityFile, "known-hosts": p.KnownHosts} {
		if f != "" && !path.IsAbs(f) {
			return fieldError(field, "%q must be an absolute path", f)
		}
	}
	return nil
}

func checkRoot(p Profile) error {
	switch {
	case p.Root == "" || !path.IsAbs(p.Root):
		return fieldError("root", "%q must be an absolute path", p.Root)
	case path.Clean(p.Root) != p.Root || strings.Contains(p.Root, ".."):
		return fieldError("root", "%q must be clean (no .., no trailing /)", p.Root)
	case p.Root == "/":
		return fieldError("root", "must be a dedicated folder, not /")
	case !rootPattern.MatchString(p.Root):
		return fieldError("root", "%q may hold only letters, digits, '_', '.', '-' and '/'", p.Root)
	}
	return nil
}

func checkCapacity(p Profile) error {
	switch {
	case p.CPUs < 1 || p.CPUs > 65536:
		return fieldError("cpus", "%d is outside 1-65536", p.CPUs)
	case p.MemoryMB < 128 || p.MemoryMB > 16<<20:
		return fieldError("memory-mb", "%d is outside 128-%d", p.MemoryMB, 16<<20)
	case p.MaxJobs < 1 || p.MaxJobs > 256:
		return fieldError("max-jobs", "%d is outside 1-256", p.MaxJobs)
	case p.OrphanGrace < 0 || p.OrphanGrace > 86400:
		return fieldError("orphan-grace", "%d is outside 0-86400 seconds", p.OrphanGrace)
	}
	return nil
}

func checkBackend(p Profile) error {
	if _, err := sandbox.ParseBackend(string(p.ExecutionBackend)); err != nil {
		return fieldError("execution-backend", "%v", err)
	}
	return nil
}

// Grace is the profile's orphan grace in seconds (default 120).
func (p Profile) Grace() int {
	if p.OrphanGrace == 0 {
		return DefaultOrphanGrace
	}
	return p.OrphanGrace
}

// identity is what makes a worker the same machine: credentials (identity
// file, known hosts) and capacity may change, these may not.
type identity struct {
	Kind    Kind            `json:"kind"`
	Host    string          `json:"host"`
	Port    int             `json:"port"`
	User    string          `json:"user"`
	RunAs   string          `json:"run_as"`
	Root    string          `json:"root"`
	Backend sandbox.Backend `json:"backend"`
	// A Slurm worker's partition and account (omitted when empty, so other
	// kinds' hashes do not change).
	Partition string `json:"partition,omitempty"`
	Account   string `json:"account,omitempty"`
}

// IdentityHash is the sha256 of the worker's identity (kind, host, port,
// user, run-as, root, backend; for Slurm also partition and account),
// frozen by a study.
func (p Profile) IdentityHash() string {
	b, _ := json.Marshal(identity{p.Kind, p.Host, p.Port, p.User, p.RunAs, p.Root, p.ExecutionBackend, p.Partition, p.Account})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
