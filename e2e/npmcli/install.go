// Package npmcli installs a pinned release of an agent CLI published on npm
// (the OpenAI Codex CLI, Claude Code) once, into a fixed cache folder
// outside the repository, for the end-to-end tests that drive the real CLI.
package npmcli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Package is one pinned CLI: its npm package, version and program name.
type Package struct {
	Name    string // e.g. "@openai/codex"
	Version string
	Bin     string // the program under node_modules/.bin, e.g. "codex"
}

// Dir is the installation folder of p:
// $XDG_CACHE_HOME (or ~/.cache)/simjecture-e2e/BIN-VERSION.
func (p Package) Dir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the %s installation: %w", p.Bin, err)
	}
	return filepath.Join(cache, "simjecture-e2e", p.Bin+"-"+p.Version), nil
}

// offline matches npm's complaints when it cannot reach its registry.
var offline = regexp.MustCompile(`(?i)ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network|getaddrinfo|socket hang up`)

// Install returns the path of p's executable, running
// `npm install NAME@VERSION` first when the cache folder does not hold it.
// skip is set, and err nil, when npm is missing or cannot reach the
// registry: the caller skips its test with that message.
func (p Package) Install() (path, skip string, err error) {
	dir, err := p.Dir()
	if err != nil {
		return "", "", err
	}
	version, spec := p.Version, p.Name+"@"+p.Version
	path = filepath.Join(dir, "node_modules", ".bin", p.Bin)
	if CheckVersion(path, version) == nil {
		return path, "", nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "npm is not installed, so " + spec + " cannot be installed for this test", nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", "", fmt.Errorf("%s cache folder: %w", p.Bin, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "installing-")
	if err != nil {
		return "", "", fmt.Errorf("%s cache folder: %w", p.Bin, err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error",
		spec).CombinedOutput()
	if err != nil {
		if offline.Match(out) {
			return "", fmt.Sprintf("npm cannot reach the registry to install %s: %s", spec, tail(string(out))), nil
		}
		return "", "", fmt.Errorf("npm install %s: %w\n%s", spec, err, out)
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", "", fmt.Errorf("keep the %s installation: %w", p.Bin, err)
	}
	return path, "", CheckVersion(path, version)
}

// CheckVersion wants `path --version` to name version.
func CheckVersion(path, version string) error {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", path, err)
	}
	if !strings.Contains(string(out), version) {
		return fmt.Errorf("%s is %s, want %s", path, strings.TrimSpace(string(out)), version)
	}
	return nil
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}
