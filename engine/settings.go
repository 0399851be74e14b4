package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/simjecture/simjecture/sandbox/machine"
)

// The settings a study reads outside every enclosure: simjecture's own
// settings folder (the worker profiles) and, for a pool with a worker
// reached over ssh, what the supervisor's ssh client reads (~/.ssh, the
// profile's known-hosts and identity files, the control-socket folder). An
// enclosed agent keeps its home, where these live, so it could otherwise
// point the supervisor's ssh at a host of its own (a ProxyCommand, a
// HostName, an enrolled key, a socket in place of our master's) and forge
// remote receipts. The same holds for what the study's agent backend reads
// as its settings (its AgentBackend row's Settings: the Codex CLI's config
// and global instructions, a provider config file), which a worker could
// rewrite to steer its own reviewer. Every enclosed launch binds them
// read-only (Enclosure.WithSettings); our folders that are missing are made
// first (0700), so that they can be bound, and any other setting missing
// then must stay missing. A symlink among them is bound where it leads,
// and the link, which stays in a folder the agent may write, is checked
// before every launch: one that leads elsewhere, a setting gone, or one
// that appeared pauses the study for the operator (docs/security.md).

// hostSettingRows are the study's setting paths, one row per kind.
var hostSettingRows = []struct {
	what  string
	paths func(pool []machine.Profile, k Contract) []string
}{
	{"simjecture's settings folder (the worker profiles)", func([]machine.Profile, Contract) []string {
		dir, err := machine.ConfigDir()
		if err != nil {
			return nil
		}
		return []string{dir}
	}},
	{"the ssh client's settings of a worker reached over ssh", func(pool []machine.Profile, _ Contract) []string {
		var out []string
		for _, p := range pool {
			out = append(out, p.SSHSettings()...)
		}
		return out
	}},
	{"a setting of the agent backend", func(_ []machine.Profile, k Contract) []string {
		if b, ok := LookupAgentBackend(k.AgentBackend); ok && b.Settings != nil {
			return b.Settings(k)
		}
		return nil
	}},
}

// settingPin is one setting path and where it led when first pinned
// ("" when it was missing).
type settingPin struct {
	what, path, real string
}

// settingPins are a study's setting paths, resolved once.
type settingPins struct {
	once sync.Once
	pool []machine.Profile
	k    Contract
	pins []settingPin
}

// pin resolves the settings the first time, making the folders among them
// that are missing (those named as folders: not a known-hosts or identity
// file, which the ssh client needs to exist already).
func (sp *settingPins) pin() {
	sp.once.Do(func() {
		for _, row := range hostSettingRows {
			for _, p := range row.paths(sp.pool, sp.k) {
				if !filepath.IsAbs(p) || slices.ContainsFunc(sp.pins, func(q settingPin) bool { return q.path == p }) {
					continue
				}
				if _, err := os.Lstat(p); os.IsNotExist(err) && settingIsFolder(p) {
					_ = os.MkdirAll(p, 0o700)
				}
				real, _ := filepath.EvalSymlinks(p) // "": missing, and it must stay so
				sp.pins = append(sp.pins, settingPin{what: row.what, path: p, real: real})
			}
		}
	})
}

// settingIsFolder reports whether a missing setting path names a folder
// we may make: ~/.ssh, the settings and control folders.
func settingIsFolder(p string) bool {
	if dir, err := machine.ConfigDir(); err == nil && p == dir {
		return true
	}
	home, _ := os.UserHomeDir()
	return home != "" && p == filepath.Join(home, ".ssh")
}

// paths are the settings that exist, as the enclosure binds them.
func (sp *settingPins) paths() []string {
	sp.pin()
	var out []string
	for _, p := range sp.pins {
		if p.real != "" {
			out = append(out, p.path)
		}
	}
	return out
}

// check reports the first setting path that now leads elsewhere than when
// it was pinned, is gone, or appeared.
func (sp *settingPins) check() error {
	sp.pin()
	for _, p := range sp.pins {
		real, err := filepath.EvalSymlinks(p.path)
		switch {
		case p.real == "" && err == nil:
			return fmt.Errorf("%s %s appeared since this supervisor started; an agent may have written it, so nothing more is launched: check it, then resume", p.what, p.path)
		case p.real == "":
		case err != nil:
			return fmt.Errorf("%s %s is gone since this supervisor started; an agent may have moved it, so nothing more is launched: check it, then resume", p.what, p.path)
		case real != p.real:
			return fmt.Errorf("%s %s now leads to %s, not %s as when this supervisor started; an agent may have re-pointed it, so nothing more is launched: check it, then resume", p.what, p.path, real, p.real)
		}
	}
	return nil
}

// codexSettings are what the Codex CLI reads from its home ($CODEX_HOME,
// else ~/.codex) that steers every turn, the reviewer's included, and that
// it never writes itself: its config (the model provider and its URL,
// instructions, MCP servers) and the global instructions. Its login,
// sessions, logs, state databases and skills folder (which it writes at
// every start) stay writable (docs/security.md names what that leaves).
func codexSettings(Contract) []string {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		home = filepath.Join(h, ".codex")
	}
	var out []string
	for _, n := range []string{"config.toml", "AGENTS.md", "AGENTS.override.md"} {
		out = append(out, filepath.Join(home, n))
	}
	return out
}

// providerConfigSetting is the study's provider config file (Claude Code's
// settings, the API connection): read again at every turn or start, so a
// worker that rewrote it would choose its reviewer's endpoint.
func providerConfigSetting(k Contract) []string {
	if k.ProviderConfig == "" {
		return nil
	}
	return []string{k.ProviderConfig}
}
