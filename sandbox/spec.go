package sandbox

import (
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Defaults applied by Run to zero Spec fields.
const (
	DefaultMemoryBytes    int64 = 4 << 30
	DefaultMaxFileBytes   int64 = 1 << 30
	DefaultWorkspaceBytes int64 = 4 << 30
	bubblewrapASHeadroom  int64 = 1 << 30
	cooperativeAS         int64 = 1 << 47
)

// Virtual paths inside every sandbox.
const (
	VirtualWork = "/work"
	VirtualTmp  = "/tmp"
)

// layout is where one run keeps its files.
type layout struct {
	run, work, tmp, root, stdout, stderr string
}

func newLayout(runDir string) layout {
	return layout{
		run:    runDir,
		work:   filepath.Join(runDir, "work"),
		tmp:    filepath.Join(runDir, "tmp"),
		root:   filepath.Join(runDir, "root"),
		stdout: filepath.Join(runDir, "stdout.log"),
		stderr: filepath.Join(runDir, "stderr.log"),
	}
}

// normalize applies defaults and rejects a Spec that cannot run.
func normalize(s Spec) (Spec, error) {
	s.CPUs = max(s.CPUs, 1)
	s.MemoryBytes = orDefault(s.MemoryBytes, DefaultMemoryBytes)
	s.MaxFileBytes = orDefault(s.MaxFileBytes, DefaultMaxFileBytes)
	s.WorkspaceBytes = orDefault(s.WorkspaceBytes, DefaultWorkspaceBytes)
	checks := []func(Spec) error{checkBasics, checkCommand, checkSealed, checkMounts}
	for _, c := range checks {
		if err := c(s); err != nil {
			return s, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
	}
	return s, nil
}

func orDefault(v, d int64) int64 {
	if v == 0 {
		return d
	}
	return v
}

func checkBasics(s Spec) error {
	_, known := Describe(s.Backend)
	switch {
	case !known:
		return fmt.Errorf("backend %q cannot run an experiment", s.Backend)
	case !filepath.IsAbs(s.SelfExe) || !filepath.IsAbs(s.RunDir) || !filepath.IsAbs(s.ArtifactDir):
		return fmt.Errorf("SelfExe, RunDir and ArtifactDir must be absolute paths")
	case s.Timeout <= 0:
		return fmt.Errorf("timeout must be positive, got %s", s.Timeout)
	case s.MemoryBytes < 0 || s.MaxFileBytes < 0 || s.WorkspaceBytes < 0:
		return fmt.Errorf("limits must not be negative")
	case s.Timeout.Seconds()*float64(s.CPUs) > math.MaxInt32:
		return fmt.Errorf("timeout × cpus is too large")
	}
	return nil
}

func checkCommand(s Spec) error {
	if len(s.Command) == 0 || s.Command[0] == "" || strings.HasPrefix(s.Command[0], "-") {
		return fmt.Errorf("command must name a program")
	}
	for _, a := range s.Command {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("command argument contains a NUL byte")
		}
	}
	for k, v := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return fmt.Errorf("environment variable %q is malformed or contains a NUL byte", k)
		}
	}
	return nil
}

func checkSealed(s Spec) error {
	seen := map[string]bool{}
	for _, f := range s.Sealed {
		rel, ok := cleanRel(f.Rel)
		if !ok || rel != f.Rel {
			return fmt.Errorf("sealed path %q must be relative and clean", f.Rel)
		}
		if seen[rel] {
			return fmt.Errorf("sealed path %q appears twice", rel)
		}
		seen[rel] = true
	}
	return nil
}

func checkMounts(s Spec) error {
	for _, m := range s.ReadOnly {
		v := path.Clean(m.Virtual)
		if !filepath.IsAbs(m.Host) || !path.IsAbs(m.Virtual) || v != m.Virtual || v == "/" ||
			within(v, VirtualWork) || within(v, VirtualTmp) || within(v, "/usr") ||
			within(v, "/proc") || within(v, "/dev") {
			return fmt.Errorf("read-only mount %q -> %q is not allowed", m.Host, m.Virtual)
		}
		if _, err := os.Stat(m.Host); err != nil {
			return fmt.Errorf("read-only mount: %w", err)
		}
	}
	return nil
}

// cleanRel returns p cleaned if it is a relative path that stays below its
// base ("a/b", not "../a", "/a", "" or ".").
func cleanRel(p string) (string, bool) {
	if p == "" || strings.ContainsRune(p, 0) || path.IsAbs(p) {
		return "", false
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// cpuLimit is RLIMIT_CPU in seconds: ceil(timeout × cpus) + 1.
func cpuLimit(s Spec) uint64 {
	return uint64(math.Ceil(s.Timeout.Seconds()*float64(s.CPUs))) + 1
}

// sandboxEnv is the experiment's whole environment, with virtual paths.
func sandboxEnv(s Spec) map[string]string {
	env := map[string]string{
		"HOME":                         VirtualWork,
		"PATH":                         "/usr/local/bin:/usr/bin:/bin",
		"TMPDIR":                       VirtualTmp,
		"LANG":                         "C.UTF-8",
		"PYTHONDONTWRITEBYTECODE":      "1",
		"OMP_NUM_THREADS":              strconv.Itoa(s.CPUs),
		"SIMJECTURE_EXECUTION_BACKEND": string(s.Backend),
	}
	for k, v := range s.Env {
		env[k] = v
	}
	return env
}

// envList renders env as sorted KEY=VALUE items.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
