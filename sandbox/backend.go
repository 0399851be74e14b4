package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Environment variables that override the launcher executables, used by the
// installer's tests to simulate a restricted host.
const (
	EnvBwrap = "SIMJECTURE_BWRAP"
	EnvProot = "SIMJECTURE_PROOT"
)

// Backends lists the concrete backends in the order auto considers them,
// followed by the one auto never picks.
var Backends = []Backend{Bubblewrap, ProotCooperative, ProcessCooperative}

// ParseBackend turns a user-supplied name into a Backend, accepting Auto.
func ParseBackend(s string) (Backend, error) {
	switch b := Backend(strings.TrimSpace(s)); b {
	case Bubblewrap, ProotCooperative, ProcessCooperative, Auto:
		return b, nil
	}
	return "", fmt.Errorf("%w %q (choose auto, bubblewrap, proot-cooperative or process-cooperative)",
		ErrUnknownBackend, s)
}

// IsCooperative reports whether b is a cooperative backend: not a security
// sandbox, refused to root.
func IsCooperative(b Backend) bool {
	return b == ProotCooperative || b == ProcessCooperative
}

// bwrapPath finds bwrap: $SIMJECTURE_BWRAP, else "bwrap" on PATH.
func bwrapPath() (string, error) { return launcherPath(EnvBwrap, "bwrap") }

// prootPath finds proot: $SIMJECTURE_PROOT, else "proot" on PATH.
func prootPath() (string, error) { return launcherPath(EnvProot, "proot") }

func launcherPath(env, name string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w %s: %w", ErrMissingExecutable, name, err)
		}
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrMissingExecutable, name, err)
	}
	return p, nil
}
