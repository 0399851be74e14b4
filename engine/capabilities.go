package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/simjecture/simjecture/sandbox"
)

// CapabilityRoot is where a capability's runtime appears inside the sandbox:
// CapabilityRoot/<name>. The cooperative backends translate it to the host path.
const CapabilityRoot = sandbox.CapabilityRoot

// Capability is a manifest <name>.json in the capabilities folder: a runtime
// folder on the host, the executable inside it, environment variables (which
// may name virtual paths) and extra read-only mounts.
type Capability struct {
	Name           string            `json:"-"`
	Runtime        string            `json:"runtime"`
	Executable     string            `json:"executable"`
	Environment    map[string]string `json:"environment"`
	ReadOnlyMounts []CapabilityMount `json:"read_only_mounts"`
	Description    string            `json:"description,omitempty"`
}

// CapabilityMount shows host folder Host read-only at Path inside the sandbox.
type CapabilityMount struct {
	Host string `json:"host"`
	Path string `json:"path"`
}

var (
	capabilityName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)
	envName        = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// LoadCapabilities reads every manifest in dir and returns them with their
// hashes (manifest plus the content of the runtime folder).
func LoadCapabilities(dir string) (map[string]Capability, map[string]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("capabilities %s: %w", dir, err)
	}
	if err := checkCapabilitiesDir(dir); err != nil {
		return nil, nil, err
	}
	caps, hashes := map[string]Capability{}, map[string]string{}
	for _, p := range paths {
		c, sum, err := loadCapability(p)
		if err != nil {
			return nil, nil, err
		}
		caps[c.Name], hashes[c.Name] = c, sum
	}
	return caps, hashes, nil
}

// checkCapabilitiesDir refuses a capabilities path that is missing,
// unreadable or not a folder, saying which.
func checkCapabilitiesDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return badField(FieldCapabilities, "%s does not exist", dir)
	case err != nil:
		return badField(FieldCapabilities, "%s: %w", dir, unwrapPath(err))
	case !st.IsDir():
		return badField(FieldCapabilities, "%s is a file, not a folder", dir)
	}
	return nil
}

func loadCapability(path string) (Capability, string, error) {
	var c Capability
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	bad := func(format string, a ...any) error {
		return fmt.Errorf("capability %s: %s: %w", name, fmt.Sprintf(format, a...), ErrInvalid)
	}
	if !capabilityName.MatchString(name) {
		return c, "", bad("the file name must match %s", capabilityName)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return c, "", bad("%v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, "", bad("malformed manifest: %v", err)
	}
	c.Name = name
	if err := checkCapability(c); err != nil {
		return c, "", bad("%v", err)
	}
	runtimeSHA, err := sandbox.DirectoryHash(c.Runtime)
	if err != nil {
		return c, "", bad("%v", err)
	}
	sum, err := sandbox.CapabilityHash(canonicalJSON(c), runtimeSHA)
	if err != nil {
		return c, "", bad("%v", err)
	}
	return c, sum, nil
}

func checkCapability(c Capability) error {
	if !filepath.IsAbs(c.Runtime) {
		return fmt.Errorf("runtime must be an absolute folder")
	}
	if st, err := os.Stat(c.Runtime); err != nil || !st.IsDir() {
		return fmt.Errorf("runtime %s is not a folder", c.Runtime)
	}
	exe, err := cleanRel("executable", c.Executable)
	if err != nil {
		return err
	}
	st, err := os.Lstat(filepath.Join(c.Runtime, exe))
	if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("executable %s is not an executable file inside the runtime", c.Executable)
	}
	for k, v := range c.Environment {
		if !envName.MatchString(k) || strings.ContainsRune(v, 0) {
			return fmt.Errorf("environment variable %q is not valid", k)
		}
		if strings.Contains(v, c.Runtime) {
			return fmt.Errorf("environment %s names the host runtime path; use %s/%s instead", k, CapabilityRoot, c.Name)
		}
	}
	for _, m := range c.ReadOnlyMounts {
		if !filepath.IsAbs(m.Host) || !filepath.IsAbs(m.Path) || reservedPath(m.Path) {
			return fmt.Errorf("read-only mount %s → %s: both must be absolute, outside /work, /tmp, /proc and /dev", m.Host, m.Path)
		}
	}
	return nil
}

func reservedPath(p string) bool {
	for _, r := range []string{"/work", "/tmp", "/proc", "/dev", CapabilityRoot} {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return p == "/"
}

// capabilitySpec fills a sandbox spec for a capability experiment after
// checking that the runtime is the one frozen with the study.
func capabilitySpec(k Contract, r Receipt, spec *sandbox.Spec) error {
	caps, hashes, err := LoadCapabilities(k.Capabilities)
	if err != nil {
		return fmt.Errorf("capability %s: %w", r.Capability, err)
	}
	c, ok := caps[r.Capability]
	if !ok || hashes[r.Capability] != k.CapabilityHashes[r.Capability] {
		return fmt.Errorf("capability %s: its runtime or manifest changed since the study was created; it refuses to run", r.Capability)
	}
	root := CapabilityRoot + "/" + c.Name
	spec.Command = append([]string{root + "/" + filepath.ToSlash(filepath.Clean(c.Executable))}, r.Args...)
	spec.ReadOnly = append(spec.ReadOnly, sandbox.Mount{Host: c.Runtime, Virtual: root})
	spec.Capability = &sandbox.CapabilityRef{Name: c.Name, Hash: hashes[c.Name]}
	for _, m := range c.ReadOnlyMounts {
		spec.ReadOnly = append(spec.ReadOnly, sandbox.Mount{Host: m.Host, Virtual: m.Path})
	}
	for k, v := range c.Environment {
		spec.Env[k] = v
	}
	return nil
}
