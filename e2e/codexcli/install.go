// Package codexcli installs a pinned release of the OpenAI Codex CLI with
// npm, once, into a fixed cache folder outside the repository, for the
// end-to-end tests that drive the real CLI.
package codexcli

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

// Dir is the installation folder of version:
// $XDG_CACHE_HOME (or ~/.cache)/simjecture-e2e/codex-VERSION.
func Dir(version string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the codex installation: %w", err)
	}
	return filepath.Join(cache, "simjecture-e2e", "codex-"+version), nil
}

// offline matches npm's complaints when it cannot reach its registry.
var offline = regexp.MustCompile(`(?i)ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network|getaddrinfo|socket hang up`)

// Install returns the path of the codex executable of version, running
// `npm install @openai/codex@VERSION` first when the cache folder does not
// hold it. skip is set, and err nil, when npm is missing or cannot reach
// the registry: the caller skips its test with that message.
func Install(version string) (path, skip string, err error) {
	dir, err := Dir(version)
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, "node_modules", ".bin", "codex")
	if CheckVersion(path, version) == nil {
		return path, "", nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "npm is not installed, so @openai/codex@" + version + " cannot be installed for this test", nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", "", fmt.Errorf("codex cache folder: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "installing-")
	if err != nil {
		return "", "", fmt.Errorf("codex cache folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error",
		"@openai/codex@"+version).CombinedOutput()
	if err != nil {
		if offline.Match(out) {
			return "", fmt.Sprintf("npm cannot reach the registry to install @openai/codex@%s: %s", version, tail(string(out))), nil
		}
		return "", "", fmt.Errorf("npm install @openai/codex@%s: %w\n%s", version, err, out)
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", "", fmt.Errorf("keep the codex installation: %w", err)
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
