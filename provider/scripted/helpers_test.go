package scripted

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// fakeRun is the content of a synthetic kepler.py result.
type fakeRun struct {
	method string
	e      float64
	orbits float64
	steps  float64
	err    float64
}

// writeReceipt writes a kepler.py-like result under a temp artifact dir and
// returns a succeeded receipt that records its real hash.
func writeReceipt(t *testing.T, id string, r fakeRun) Receipt {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := r.method + ".json"
	data, err := json.Marshal(map[string]any{
		"method": r.method, "eccentricity": r.e, "orbits": r.orbits, "steps_per_orbit": r.steps,
		"max_rel_energy_error": r.err, "final_rel_energy_error": r.err / 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, out), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return Receipt{
		ID: id, Status: statusSucceeded, Source: SourceName, Outputs: []string{out},
		Artifacts:   map[string]Artifact{out: {SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}},
		ArtifactDir: dir,
	}
}

// rootStatement is the demo hypothesis, as root's statement.
const rootStatement = "Explicit (forward) Euler conserves the total energy of an eccentric Kepler orbit (e = 0.5) to within 1 % over 10 orbits at 1000 steps per orbit."

// repairStatement is the repair the worker commits for the demo.
var repairStatement = repairCommit(demoCase(rootStatement), Criterion{Metric: DefaultMetric, Threshold: 0.01}).Statement

// rawJSON marshals v for packet fields.
func rawJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
