package npmcli

import (
	"strings"
	"testing"
)

// TestInstallSkipsWhenTheRegistryIsUnreachable points npm at a closed
// loopback port: Install must report a skip, not an error.
func TestInstallSkipsWhenTheRegistryIsUnreachable(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("npm_config_registry", "http://127.0.0.1:9/")
	t.Setenv("npm_config_fetch_retries", "0")
	t.Setenv("npm_config_cache", t.TempDir())
	path, skip, err := Package{Name: "@openai/codex", Version: "0.169.0", Bin: "codex"}.Install()
	if err != nil || path != "" || !strings.Contains(skip, "cannot reach the registry") && !strings.Contains(skip, "npm is not installed") {
		t.Errorf("Install with an unreachable registry: path %q, skip %q, err %v; want a skip", path, skip, err)
	}
}
