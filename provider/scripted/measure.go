package scripted

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// measurement is what one run's JSON artifact reports.
type measurement struct {
	File   string
	Method string
	Case   orbitCase
	Value  float64
}

// label describes the measured case for quoting in conclusions and verdicts.
func (m measurement) label(metric string) string {
	parts := []string{m.Method}
	if m.Case.E != nil {
		parts = append(parts, "e="+formatNum(*m.Case.E))
	}
	if m.Case.Orbits != nil {
		parts = append(parts, formatNum(*m.Case.Orbits)+" orbits")
	}
	if m.Case.StepsPerOrbit != nil {
		parts = append(parts, formatNum(*m.Case.StepsPerOrbit)+" steps/orbit")
	}
	return fmt.Sprintf("(%s): %s = %s", strings.Join(parts, ", "), metric, formatNum(m.Value))
}

// readMeasurement returns the first JSON file among names (relative to dir)
// that holds the metric as a number.
func readMeasurement(dir string, names []string, metric string) (measurement, error) {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	for _, name := range sorted {
		if !strings.HasSuffix(name, ".json") || !filepath.IsLocal(name) {
			continue
		}
		m, ok, err := measureFile(filepath.Join(dir, name), metric)
		if err != nil {
			return measurement{}, err
		}
		if ok {
			m.File = name
			return m, nil
		}
	}
	return measurement{}, fmt.Errorf("%w: %s in %s", ErrNoMetric, metric, dir)
}

// measureFile decodes one JSON artifact; ok is false when it lacks the metric.
func measureFile(path, metric string) (measurement, bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return measurement{}, false, fmt.Errorf("read artifact: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return measurement{}, false, nil
	}
	v, ok := doc[metric].(float64)
	if !ok {
		return measurement{}, false, nil
	}
	m := measurement{Value: v, Case: orbitCase{
		E:             number(doc, "eccentricity"),
		Orbits:        number(doc, "orbits"),
		StepsPerOrbit: number(doc, "steps_per_orbit"),
	}}
	m.Method, _ = doc["method"].(string)
	return m, true, nil
}

// number returns a numeric field of a decoded JSON object, or nil.
func number(doc map[string]any, key string) *float64 {
	if v, ok := doc[key].(float64); ok {
		return &v
	}
	return nil
}

// verifyArtifacts re-hashes every artifact of a receipt and returns one gap
// per file that is missing, escapes artifact_dir, or differs from the receipt.
func verifyArtifacts(r Receipt) []string {
	if len(r.Artifacts) == 0 {
		return []string{fmt.Sprintf("%s lists no artifacts to check", r.ID)}
	}
	if r.ArtifactDir == "" {
		return []string{fmt.Sprintf("%s has no artifact_dir", r.ID)}
	}
	var gaps []string
	for _, name := range sortedKeys(r.Artifacts) {
		if gap := verifyArtifact(r, name); gap != "" {
			gaps = append(gaps, gap)
		}
	}
	return gaps
}

// verifyArtifact checks one artifact file against its recorded hash and size.
func verifyArtifact(r Receipt, name string) string {
	want := r.Artifacts[name]
	if !filepath.IsLocal(name) {
		return fmt.Sprintf("%s: artifact path %q leaves artifact_dir", r.ID, name)
	}
	data, err := os.ReadFile(filepath.Join(r.ArtifactDir, name))
	if err != nil {
		return fmt.Sprintf("%s: artifact %s cannot be read: %v", r.ID, name, err)
	}
	sum := sha256.Sum256(data)
	got := hex.EncodeToString(sum[:])
	if !strings.EqualFold(got, want.SHA256) {
		return fmt.Sprintf("%s: artifact %s has sha256 %s, receipt records %s", r.ID, name, got, want.SHA256)
	}
	if want.Bytes > 0 && int64(len(data)) != want.Bytes {
		return fmt.Sprintf("%s: artifact %s has %d bytes, receipt records %d", r.ID, name, len(data), want.Bytes)
	}
	return ""
}

// sortedKeys returns the artifact names in a stable order.
func sortedKeys(m map[string]Artifact) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
