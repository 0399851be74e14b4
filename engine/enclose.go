package engine

import (
	"context"
	"os"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/sandbox"
)

// Record protection, as status --json, report.json, doctor and the TUI say
// it (docs/security.md).
const (
	// ProtectionEnclosed: every agent and reviewer process runs with the
	// campaign folder read-only but for the folders of its own turn, and
	// reaches the store only through the supervisor's lab socket.
	ProtectionEnclosed = "enclosed"
	// ProtectionNone: agents run as the supervisor's own account and could
	// rewrite the store, the artifacts and the reports.
	ProtectionNone = "not protected from the agent"
)

// ProbeProtection is the record protection a supervisor started now as this
// account would give (doctor): enclosed where the Bubblewrap probe passes.
func ProbeProtection(ctx context.Context, self string) string {
	if sandbox.ProbeEnclosure(ctx, self).Available() {
		return ProtectionEnclosed
	}
	return ProtectionNone
}

// probeEnclosure probes the enclosure once per supervisor.
func (sv *Supervisor) probeEnclosure(ctx context.Context) sandbox.Enclosure {
	sv.encOnce.Do(func() { sv.enc = sandbox.ProbeEnclosure(ctx, sv.opt.SelfExe) })
	return sv.enc
}

// protection is the record protection of the current run: enclosed when
// the enclosure is available and the lab socket listens.
func (sv *Supervisor) protection() string {
	if sv.enclosed {
		return ProtectionEnclosed
	}
	return ProtectionNone
}

// enclose sets t's Wrap: when the run encloses its agents, the agent guard
// and the enclosure (the campaign folder read-only but for the launch's log
// folder and, for a worker, its research/ folder and the agent's state
// folder); otherwise the guard alone.
func (sv *Supervisor) enclose(t provider.Turn) provider.Turn {
	enc := sv.enc
	if !sv.enclosed {
		// Not enclosed, the agent still runs under the guard, so that its
		// descendants die with the supervisor.
		t.Wrap = func(_ string, argv []string) []string { return enc.Guard(argv) }
		return t
	}
	// The programs the study runs later, and the settings it reads
	// outside, stay as they are.
	enc = enc.WithPrograms(sv.progs.paths()...).WithSettings(sv.settings.paths()...).WithHidden(sv.settings.hidden()...)
	var others []string
	if t.Role == provider.RoleWorker {
		others = append(others, sv.c.Research())
		// bwrap binds only folders that exist; one it cannot make stays
		// read-only, and the backend that needs it reports the failure.
		if t.StateDir != "" && os.MkdirAll(t.StateDir, 0o700) == nil {
			others = append(others, t.StateDir)
		}
	}
	// The launch's own log folder, not the turn's: a retry in a new
	// session gets a new folder (provider.InFreshSession), and the folder
	// of the failed attempt stays read-only to it.
	t.Wrap = func(logDir string, argv []string) []string {
		return enc.Wrap(sv.c.Dir, append([]string{logDir}, others...), argv)
	}
	return t
}
