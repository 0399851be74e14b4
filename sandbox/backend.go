package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Environment variables that override the launcher executables, used by the
// installer's tests to simulate a restricted host.
const (
	EnvBwrap = "SIMJECTURE_BWRAP"
	EnvProot = "SIMJECTURE_PROOT"
)

// The one-line warnings for every cooperative backend: as a sentence (the
// terminal UI's review) and as a clause (the CLI's "WARNING: …").
const (
	CooperativeNotice = "Cooperative execution is not a security sandbox: no filesystem or network isolation."
	CooperativeClause = "cooperative execution is not a security sandbox (no filesystem or network isolation)"
)

// BackendInfo describes one execution backend: its names and wording for
// every user interface, what it isolates, and how it is probed and launched.
// Adding a backend is one file with its probe and launcher plus one row in
// backendTable.
type BackendInfo struct {
	Name   Backend
	Label  string // the choice in the new-study form, e.g. "PRoot · cooperative — not a security sandbox"
	Short  string // the status-bar mode indicator, e.g. "PRoot · cooperative ⚠"
	Title  string // the warning pane's heading, e.g. "PRoot · cooperative"
	Column string // a table column, e.g. "proot-coop"
	// Explains in one or two sentences how experiments run (the warning pane).
	Explains string
	// Warning is the probe's warning for a cooperative backend; it contains
	// "not a security sandbox". Empty for an isolating backend.
	Warning string

	Cooperative      bool // not a security sandbox; refused to root
	KernelIsolation  bool
	NetworkIsolation bool
	AutoCandidate    bool // auto may pick it, in table order (cooperative ones only when not root)

	probe  func(context.Context) Report
	launch func(Spec, layout, *helperConfig) error // fills in the launcher's argv, env and settings
}

// backendTable is every execution backend, in the order auto considers them
// and user interfaces list them.
var backendTable = []BackendInfo{
	{
		Name: Bubblewrap, Label: "Bubblewrap · isolated", Short: "Bubblewrap · isolated",
		Title: "Bubblewrap · isolated", Column: "bwrap",
		Explains:        "Experiments run in kernel namespaces: no network, a read-only system view and a private /tmp.",
		KernelIsolation: true, NetworkIsolation: true, AutoCandidate: true,
		probe: probeBubblewrap, launch: launchBubblewrap,
	},
	{
		Name: ProotCooperative, Label: "PRoot · cooperative — not a security sandbox", Short: "PRoot · cooperative ⚠",
		Title: "PRoot · cooperative", Column: "proot-coop",
		Explains:    "Experiments run under PRoot as this account. PRoot only translates paths: it gives no filesystem or network isolation.",
		Warning:     WarningCooperative,
		Cooperative: true, AutoCandidate: true,
		probe: probeProot, launch: launchProot,
	},
	{
		Name: ProcessCooperative, Label: "Native process · trusted host — not a security sandbox",
		Short: "Native process · trusted host ⚠", Title: "Native process · trusted host", Column: "native-coop",
		Explains:    "Experiments run as plain processes of this account, with no filesystem or network isolation.",
		Warning:     "Native process execution is not a security sandbox: experiments run as plain processes of this account; run trusted code only",
		Cooperative: true,
		probe:       func(context.Context) Report { return probeProcess() }, launch: launchProcess,
	},
}

// Backends returns every execution backend, in the order auto considers
// them and user interfaces list them. The slice is a copy.
func Backends() []BackendInfo { return append([]BackendInfo(nil), backendTable...) }

// Describe returns the row of backend b; false for Auto and unknown names.
func Describe(b Backend) (BackendInfo, bool) {
	for _, info := range backendTable {
		if info.Name == b {
			return info, true
		}
	}
	return BackendInfo{}, false
}

// ParseBackend turns a user-supplied name into a Backend, accepting Auto.
func ParseBackend(s string) (Backend, error) {
	b := Backend(strings.TrimSpace(s))
	if _, ok := Describe(b); ok || b == Auto {
		return b, nil
	}
	return "", fmt.Errorf("%w %q (choose %s)", ErrUnknownBackend, s, choices())
}

// choices is "auto, bubblewrap, … or process-cooperative".
func choices() string {
	names := []string{string(Auto)}
	for _, info := range backendTable {
		names = append(names, string(info.Name))
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// IsCooperative reports whether b is a cooperative backend: not a security
// sandbox, refused to root.
func IsCooperative(b Backend) bool {
	info, _ := Describe(b)
	return info.Cooperative
}

func launcherPath(env, name string) (string, error) {
	if p := os.Getenv(env); env != "" && p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w %s: %w", ErrMissingExecutable, name, err)
		}
		return p, nil
	}
	key := name + "\x00" + os.Getenv("PATH")
	if p, ok := launcherPaths.Load(key); ok && isExecutable(p.(string)) {
		return p.(string), nil // one stat instead of one per PATH entry at every launch
	}
	for _, d := range systemBin { // before PATH: a folder on it an agent may write cannot shadow them
		if p := filepath.Join(d, name); isExecutable(p) {
			launcherPaths.Store(key, p)
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrMissingExecutable, name, err)
	}
	launcherPaths.Store(key, p)
	return p, nil
}

// SystemProgram is the program name as the supervisor runs it outside any
// enclosure: looked for in the system's folders first, then on PATH (a
// folder of PATH an agent may write, ~/go/bin or ~/.local/bin before
// /usr/bin, cannot shadow the system's ssh or sbatch).
func SystemProgram(name string) (string, error) { return launcherPath("", name) }

// systemBin are the system's folders of programs, read-only to an enclosed
// agent (docs/security.md), where launchers are looked for before PATH.
var systemBin = []string{"/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin"}

// launcherPaths holds what LookPath found, by name and PATH; an entry is
// used only while it is still an executable file.
var launcherPaths sync.Map

// LauncherPrograms are the launchers this host would start experiments and
// enclosures with — bwrap and proot, as found now ($SIMJECTURE_BWRAP,
// $SIMJECTURE_PROOT, else PATH) — those that exist. The study pins them
// with its other programs: they run as the supervisor's account, outside
// any enclosure.
func LauncherPrograms() []string {
	var out []string
	for _, find := range []func() (string, error){bwrapPath, prootPath} {
		if p, err := find(); err == nil {
			out = append(out, p)
		}
	}
	return out
}
