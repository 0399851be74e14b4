package benchtask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// runnerPy is our runner, sealed beside reduce.py in every case run: it
// imports reduce.py from the working folder, calls reduce_case on the one
// case folder and writes the returned dict to actual.json (NaN and
// infinities refused). A reducer that fails, returns something else or
// prints a traceback exits non-zero with its stderr kept.
const runnerPy = `import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("reduce", "reduce.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
result = module.reduce_case("case")
if not isinstance(result, dict):
    sys.exit("reduce_case returned %s, want a dict" % type(result).__name__)
with open("actual.json", "w") as f:
    json.dump(result, f, allow_nan=False)
`

// Sealed names inside every case run.
const (
	runnerName = "runner.py"
	reduceName = "reduce.py"
	caseName   = "case"
	actualName = "actual.json"
)

// Limits of one case run.
const (
	caseMemoryBytes    int64 = 3 << 30
	caseMaxFileBytes   int64 = 16 << 20
	caseWorkspaceBytes int64 = 1 << 30
	stderrLines              = 3   // lines of stderr kept in an error
	stderrKeep               = 400 // at most this many characters of them
)

// caseRun runs reduce.py on cases through one execution backend.
type caseRun struct {
	backend  sandbox.Backend
	selfExe  string
	scratch  string
	deadline time.Time
	run      func(context.Context, sandbox.Spec) (sandbox.Result, error)
	sealed   []sandbox.SealedFile // runner.py and reduce.py
	seq      int
}

// seal writes data under the scratch folder and returns its sealed file.
func (r *caseRun) seal(rel string, data []byte) (sandbox.SealedFile, error) {
	host := filepath.Join(r.scratch, "sealed", fmt.Sprint(r.seq), rel)
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		return sandbox.SealedFile{}, fmt.Errorf("grade: %w", err)
	}
	if err := os.WriteFile(host, data, 0o644); err != nil {
		return sandbox.SealedFile{}, fmt.Errorf("grade: %w", err)
	}
	sum := sha256.Sum256(data)
	return sandbox.SealedFile{Rel: rel, HostPath: host, SHA256: hex.EncodeToString(sum[:])}, nil
}

// one runs reduce.py on case c and returns its numbers, or a failure
// naming what went wrong. err is a harness failure only.
func (r *caseRun) one(ctx context.Context, c Case, holdout bool) (map[string]json.RawMessage, string, error) {
	r.seq++
	spec := sandbox.Spec{Backend: r.backend, SelfExe: r.selfExe, Command: []string{"python3", runnerName},
		RunDir: filepath.Join(r.scratch, "runs", fmt.Sprint(r.seq)), ArtifactDir: filepath.Join(r.scratch, "out", fmt.Sprint(r.seq)),
		Outputs: []string{actualName}, Timeout: time.Until(r.deadline), CPUs: 1, MemoryBytes: caseMemoryBytes,
		MaxFileBytes: caseMaxFileBytes, WorkspaceBytes: caseWorkspaceBytes, Sealed: append([]sandbox.SealedFile(nil), r.sealed...)}
	if spec.Timeout <= 0 {
		return nil, "the grading timeout passed before this case ran", nil
	}
	for _, rel := range sortedKeys(c.Files) {
		f, err := r.seal(caseName+"/"+rel, c.Files[rel])
		if err != nil {
			return nil, "", err
		}
		spec.Sealed = append(spec.Sealed, f)
	}
	res, err := r.run(ctx, spec)
	if err != nil {
		return nil, "", fmt.Errorf("grade: run reduce.py: %w", err)
	}
	if why := failure(res, spec.Timeout, holdout); why != "" {
		return nil, why, nil
	}
	return readActual(filepath.Join(spec.ArtifactDir, actualName))
}

// failure says why a case run failed, or "" when it succeeded.
func failure(res sandbox.Result, timeout time.Duration, holdout bool) string {
	tail := stderrTail(res.StderrTail, holdout)
	switch {
	case res.TimedOut || res.LimitExceeded == sandbox.LimitWallTime:
		return fmt.Sprintf("reduce.py exceeded the grading timeout (%.0f s left for this case)", math.Ceil(timeout.Seconds()))
	case res.LimitExceeded != "":
		return fmt.Sprintf("reduce.py hit the %s limit%s", res.LimitExceeded, tail)
	case len(res.InputMutations) > 0:
		return "reduce.py changed its inputs: " + strings.Join(res.InputMutations, ", ")
	case res.Signal != nil:
		return fmt.Sprintf("reduce.py was killed by %s%s", *res.Signal, tail)
	case res.ReturnCode == nil || *res.ReturnCode != 0:
		return fmt.Sprintf("reduce.py failed (exit %d)%s", code(res.ReturnCode), tail)
	case len(res.MissingOutputs) > 0 || len(res.RejectedOutputs) > 0:
		return "reduce_case wrote no usable result"
	}
	return ""
}

func code(rc *int) int {
	if rc == nil {
		return -1
	}
	return *rc
}

// decimals matches numbers with a fraction or an exponent: the values a
// traceback may quote from a holdout's input. Line numbers stay.
var decimals = regexp.MustCompile(`[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)|[-+]?(\d+\.\d*|\.\d+)`)

// stderrTail is ": " and the last lines of stderr (at most stderrKeep
// characters), with the numbers of a holdout masked, or "" for an empty
// stderr.
func stderrTail(s string, holdout bool) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	s = strings.Join(lines[max(0, len(lines)-stderrLines):], " | ")
	if s == "" {
		return ""
	}
	if holdout {
		s = decimals.ReplaceAllString(s, "<number>")
	}
	if r := []rune(s); len(r) > stderrKeep {
		s = "…" + string(r[len(r)-stderrKeep:])
	}
	return ": " + s
}

func readActual(p string) (map[string]json.RawMessage, string, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, "reduce_case wrote no result", nil
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, "reduce_case returned something that is not a JSON object of numbers", nil
	}
	return out, "", nil
}
