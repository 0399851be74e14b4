package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
)

// CapabilityRoot is where a capability's runtime appears inside the sandbox:
// CapabilityRoot/<name>. The cooperative backends translate it to the host
// path of the machine that runs the experiment (the Mount's Host).
const CapabilityRoot = "/opt/simjecture-capabilities"

// CapabilityRef names the capability an experiment runs: the mount of
// ReadOnly at CapabilityRoot/Name is its runtime, and Hash is its manifest
// hash frozen with the study. A worker runs it with its own shipped copy.
type CapabilityRef struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

// CapabilityHash is a capability's manifest hash: the sha256 of the
// canonical JSON {"manifest": MANIFEST, "runtime_sha256": RUNTIME}, where
// manifest is the manifest's own canonical JSON (compact, no HTML escaping)
// and runtime the DirectoryHash of its runtime folder.
func CapabilityHash(manifest []byte, runtime string) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(map[string]any{"manifest": json.RawMessage(manifest), "runtime_sha256": runtime})
	if err != nil {
		return "", fmt.Errorf("capability manifest: %w", err)
	}
	sum := sha256.Sum256(bytes.TrimRight(buf.Bytes(), "\n"))
	return hex.EncodeToString(sum[:]), nil
}

// DirectoryHash is the sha256 of "simjecture-directory-v1\n" followed by
// one "path\0bytes\0sha256\n" line per regular file, sorted by path. A
// symlink or special file inside the folder is an error.
func DirectoryHash(dir string) (string, error) {
	var lines []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s inside the runtime is not a regular file (symlinks are refused)", rel)
		}
		sum, size, err := HashFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s\x00%d\x00%s\n", filepath.ToSlash(rel), size, sum))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash runtime %s: %w", dir, err)
	}
	sort.Strings(lines)
	h := sha256.New()
	h.Write([]byte("simjecture-directory-v1\n"))
	for _, l := range lines {
		h.Write([]byte(l))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
