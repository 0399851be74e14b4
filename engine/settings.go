package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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

// settingScope is what the rows read: the pool's profiles, the contract
// and the study's program files (resolved).
type settingScope struct {
	pool     []machine.Profile
	k        Contract
	programs []string
}

// hostSettingRows are the study's setting paths, one row per kind; a path
// with a glob is a folder listing (see settingPin).
var hostSettingRows = []struct {
	what  string
	paths func(sc settingScope) []settingPath
}{
	{"simjecture's settings folder (the worker profiles)", func(settingScope) []settingPath {
		dir, err := machine.ConfigDir()
		if err != nil {
			return nil
		}
		return []settingPath{{path: dir}}
	}},
	{"the ssh client's settings of a worker reached over ssh", func(sc settingScope) []settingPath {
		var out []settingPath
		for _, p := range sc.pool {
			out = append(out, plainPaths(p.SSHSettings())...)
			for _, h := range p.SSHSecrets() {
				out = append(out, settingPath{path: h, hide: true})
			}
			for _, inc := range p.SSHIncludes() {
				out = append(out, globPath(inc))
			}
		}
		return out
	}},
	{"a setting of the agent backend", func(sc settingScope) []settingPath {
		if b, ok := LookupAgentBackend(sc.k.AgentBackend); ok && b.Settings != nil {
			return plainPaths(b.Settings(sc.k))
		}
		return nil
	}},
	{"the Python user site of an interpreter the study runs", pythonUserSites},
}

// settingPath is a row's path; with glob, the folder path's listing: the
// names in it that match glob may not grow (a file that Python runs at
// every start, added beside the operator's); with hide, one the enclosure
// hides rather than binds read-only.
type settingPath struct {
	path, glob string
	hide       bool
}

// globPath is the listing an absolute glob pattern stands for: the folder
// of its components before the first with a wildcard, and the rest (a
// pattern without one: its folder and its name).
func globPath(pattern string) settingPath {
	parts := strings.Split(filepath.Clean(pattern), "/")
	i := slices.IndexFunc(parts, func(c string) bool { return strings.ContainsAny(c, "*?[") })
	if i < 0 {
		i = len(parts) - 1
	}
	return settingPath{path: "/" + filepath.Join(parts[:i]...), glob: filepath.Join(parts[i:]...)}
}

func plainPaths(paths []string) []settingPath {
	out := make([]settingPath, len(paths))
	for i, p := range paths {
		out[i] = settingPath{path: p}
	}
	return out
}

// settingPin is one setting path and where it led when first pinned
// ("" when it was missing); for a listing, the names that matched.
type settingPin struct {
	what, path, real string
	glob             string
	names            []string
	hide             bool
}

// settingPins are a study's setting paths, resolved once.
type settingPins struct {
	once     sync.Once
	pool     []machine.Profile
	k        Contract
	programs func() []string // the study's program files (programPins.paths)
	pins     []settingPin
}

// pin resolves the settings the first time, making the folders among them
// that are missing (those named as folders: not a known-hosts or identity
// file, which the ssh client needs to exist already).
func (sp *settingPins) pin() {
	sp.once.Do(func() {
		sc := settingScope{pool: sp.pool, k: sp.k}
		if sp.programs != nil {
			sc.programs = sp.programs()
		}
		for _, row := range hostSettingRows {
			for _, p := range row.paths(sc) {
				if !filepath.IsAbs(p.path) || slices.ContainsFunc(sp.pins, func(q settingPin) bool { return q.path == p.path && q.glob == p.glob }) {
					continue
				}
				if _, err := os.Lstat(p.path); os.IsNotExist(err) && settingIsFolder(p.path) {
					_ = os.MkdirAll(p.path, 0o700)
				}
				pin := settingPin{what: row.what, path: p.path, real: settingState(p.path), glob: p.glob, hide: p.hide}
				if p.glob != "" {
					pin.names = listing(p.path, p.glob)
				}
				sp.pins = append(sp.pins, pin)
			}
		}
	})
}

// listing are the paths in dir that match glob, relative to dir.
func listing(dir, glob string) []string {
	found, _ := filepath.Glob(filepath.Join(dir, glob))
	for i, f := range found {
		found[i], _ = filepath.Rel(dir, f)
	}
	return found
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

// settingState is where the setting at path leads: "" when nothing is
// there (not even a symlink), the file it resolves to, or for a symlink
// that leads nowhere (yet) "symlink to TARGET".
func settingState(path string) string {
	if _, err := os.Lstat(path); err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	target, _ := os.Readlink(path)
	return "symlink to " + target
}

// paths are the settings that exist, as the enclosure binds them.
func (sp *settingPins) paths() []string { return sp.existing(false) }

// hidden are the settings that exist and the enclosure hides.
func (sp *settingPins) hidden() []string { return sp.existing(true) }

func (sp *settingPins) existing(hidden bool) []string {
	sp.pin()
	var out []string
	for _, p := range sp.pins {
		if filepath.IsAbs(p.real) && p.glob == "" && p.hide == hidden {
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
		if p.glob != "" {
			for _, n := range listing(p.path, p.glob) {
				if !slices.Contains(p.names, n) {
					return settingChanged(p.what, filepath.Join(p.path, n), "appeared", "written it")
				}
			}
			continue
		}
		switch real := settingState(p.path); {
		case real == p.real:
		case p.real == "":
			return settingChanged(p.what, p.path, "appeared", "written it")
		case real == "":
			return settingChanged(p.what, p.path, "is gone", "moved it")
		default:
			return settingChanged(p.what, p.path, fmt.Sprintf("leads to %s, not to %s as it did", real, p.real), "re-pointed it")
		}
	}
	return nil
}

// settingChanged says that the setting at path of kind what changed
// (how: "appeared", "is gone", "leads to …, not to … as it did") since this supervisor
// started, and what an agent may have done.
func settingChanged(what, path, how, done string) error {
	return fmt.Errorf("%s %s %s since this supervisor started; an agent may have %s, so nothing more is launched: check it, then resume",
		what, path, how, done)
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

// pythonUserSites are, for the Python interpreters among the study's
// programs, the files their site folders hold that Python runs at every
// start (usercustomize and sitecustomize, as a module, a compiled one or a
// package, and the .pth files, whose "import" lines run), for every Python
// version: a worker that added one would run code of its own in its
// reviewer's Python. The site folders are the user base's ($PYTHONUSERBASE,
// else ~/.local) and each interpreter's own prefix's (a virtual
// environment's, whose pyvenv.cfg is a setting too, a pyenv version's),
// the interpreter taken both as found on PATH and with its symlinks
// resolved. The existing files are bound; none may be added. They are
// found by name, never by running an interpreter: one planted on PATH
// would run as the supervisor.
func pythonUserSites(sc settingScope) []settingPath {
	var libs []string
	add := func(lib string) {
		if !slices.Contains(libs, lib) {
			libs = append(libs, lib)
		}
	}
	var out []settingPath
	for _, prog := range sc.programs {
		if !strings.HasPrefix(filepath.Base(prog), "python") {
			continue
		}
		prefix := filepath.Dir(filepath.Dir(prog))
		add(filepath.Join(prefix, "lib"))
		if cfg := filepath.Join(prefix, "pyvenv.cfg"); !slices.ContainsFunc(out, func(p settingPath) bool { return p.path == cfg }) {
			out = append(out, settingPath{path: cfg})
		}
	}
	if len(libs) == 0 {
		return nil
	}
	base := os.Getenv("PYTHONUSERBASE")
	if home, err := os.UserHomeDir(); base == "" && err == nil {
		base = filepath.Join(home, ".local")
	}
	if base != "" {
		add(filepath.Join(base, "lib"))
	}
	for _, lib := range libs {
		for _, glob := range pythonStartupFiles {
			out = append(out, settingPath{path: lib, glob: glob})
			for _, n := range listing(lib, glob) {
				out = append(out, settingPath{path: filepath.Join(lib, n)})
				if strings.HasSuffix(n, ".pth") {
					out = append(out, pthModules(filepath.Join(lib, n))...)
				}
			}
		}
	}
	return out
}

// dunderImport finds __import__('name') in a .pth line.
var dunderImport = regexp.MustCompile(`__import__\(\s*['"]([A-Za-z_][A-Za-z0-9_]*)`)

// pthModules are the modules the "import" lines of the .pth file at path
// import at every start (setuptools' distutils-precedence.pth imports
// _distutils_hack), as their package folder and module file beside it.
func pthModules(path string) []settingPath {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	site := filepath.Dir(path)
	var out []settingPath
	for _, line := range strings.Split(string(body), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "import")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		stmt, _, _ := strings.Cut(rest, ";")
		names := strings.Split(stmt, ",")
		for _, m := range dunderImport.FindAllStringSubmatch(rest, -1) {
			names = append(names, m[1])
		}
		for _, name := range names {
			fields := strings.Fields(name)
			if len(fields) == 0 {
				continue
			}
			mod, _, _ := strings.Cut(fields[0], ".")
			if mod == "" || strings.ContainsAny(mod, "/\\") {
				continue
			}
			out = append(out, settingPath{path: filepath.Join(site, mod)}, settingPath{path: filepath.Join(site, mod+".py")})
		}
	}
	return out
}

// pythonStartupFiles are the files of a site folder that Python runs at
// its start, as globs under a prefix's lib folder.
var pythonStartupFiles = []string{"python*/site-packages/usercustomize*", "python*/site-packages/sitecustomize*",
	"python*/site-packages/*.pth"}
