package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
)

// TestShippableCapabilities: each capability is shipped with the hash a
// study freezes for it (the manifest's canonical JSON plus its runtime's
// hash, as it always was), and one with read-only mounts of host folders
// is left out with a line saying so.
func TestShippableCapabilities(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runtime := filepath.Join(dir, "rt")
	if err := os.MkdirAll(filepath.Join(runtime, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runtime, "bin", "x"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	caps := filepath.Join(dir, "caps")
	manifests := map[string]map[string]any{
		"plain": {"runtime": runtime, "executable": "bin/x", "environment": map[string]string{"X_HOME": CapabilityRoot + "/plain"},
			"description": "a <plain> & simple one"},
		"mounts": {"runtime": runtime, "executable": "bin/x", "read_only_mounts": []map[string]string{{"host": "/usr/share", "path": "/data"}}},
	}
	if err := os.MkdirAll(caps, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, m := range manifests {
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(caps, name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ship, skipped, err := ShippableCapabilities(caps)
	if err != nil || len(ship) != 1 || ship[0].Name != "plain" || len(skipped) != 1 || !strings.Contains(skipped[0], "mounts not shipped") {
		t.Fatalf("ShippableCapabilities = %+v, %q, %v", ship, skipped, err)
	}
	loaded, hashes, err := LoadCapabilities(caps)
	if err != nil {
		t.Fatal(err)
	}
	rt, _ := sandbox.DirectoryHash(runtime)
	sum := sha256.Sum256(canonicalJSON(map[string]any{"manifest": loaded["plain"], "runtime_sha256": rt}))
	if want := hex.EncodeToString(sum[:]); hashes["plain"] != want || ship[0].Hash != want {
		t.Errorf("hash %s, shipped %s; the frozen formula gives %s", hashes["plain"], ship[0].Hash, want)
	}
	if again, _ := sandbox.CapabilityHash(ship[0].Manifest, rt); again != ship[0].Hash {
		t.Errorf("the shipped manifest re-hashes to %s, not %s", again, ship[0].Hash)
	}
}
