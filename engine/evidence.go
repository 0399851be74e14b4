package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/simjecture/simjecture/store"
)

// Bounds of ReviewEvidence: a review's evidence is read for display, so
// neither a review citing hundreds of experiments nor a large artifact
// costs more than these.
const (
	EvidenceExperiments = 20       // experiments read per review
	EvidenceValues      = 12       // values kept per experiment (kepler.py writes 11 scalars)
	evidenceBytes       = 64 << 10 // bytes read of one JSON artifact
	evidenceValueChars  = 60       // characters kept of one value
)

// Evidence is what one experiment a review cites measured: the first
// scalar fields of its JSON artifacts (result.json first), in file order.
type Evidence struct {
	Experiment string
	Status     ExpStatus
	Purpose    string
	Values     []Measured
	// Note says why values are missing or cut (no JSON artifact, unreadable, …).
	Note string
}

// Measured is one scalar field of an artifact: "result.json", "max_rel_energy_error", "0.58".
type Measured struct {
	Artifact, Field, Value string
}

// ReviewEvidence reads the experiments review id cites (the first
// EvidenceExperiments of them) and the measured values of each.
func (v *View) ReviewEvidence(ctx context.Context, id string) ([]Evidence, error) {
	var recs []Receipt
	var missing []string
	err := v.s.Read(ctx, func(tx *store.Tx) error {
		r, err := getReview(tx, id)
		if err != nil {
			return err
		}
		for _, x := range r.Experiments[:min(len(r.Experiments), EvidenceExperiments)] {
			rec, err := getReceipt(tx, x)
			if err != nil {
				missing = append(missing, x)
				continue
			}
			recs = append(recs, v.c.Place(rec))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read review %s: %w", id, err)
	}
	out := make([]Evidence, 0, len(recs)+len(missing))
	for _, r := range recs {
		out = append(out, readEvidence(r))
	}
	for _, x := range missing {
		out = append(out, Evidence{Experiment: x, Note: "no such experiment in the record"})
	}
	return out, nil
}

// readEvidence reads the measured values of one experiment's artifacts.
func readEvidence(r Receipt) Evidence {
	ev := Evidence{Experiment: r.ID, Status: r.Status, Purpose: r.Purpose}
	names := jsonArtifacts(r)
	if len(names) == 0 {
		ev.Note = "no JSON artifact"
	}
	for _, name := range names {
		room := EvidenceValues - len(ev.Values)
		if room <= 0 {
			ev.Note = "more values in " + name
			break
		}
		vals, err := scalarFields(filepath.Join(r.ArtifactDir, name), room)
		if err != nil {
			ev.Note = fmt.Sprintf("%s: %v", name, err)
			continue
		}
		for _, m := range vals {
			m.Artifact = name
			ev.Values = append(ev.Values, m)
		}
	}
	return ev
}

// jsonArtifacts are the experiment's .json artifacts, result.json first.
func jsonArtifacts(r Receipt) []string {
	var names []string
	for n := range r.Artifacts {
		if strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := filepath.Base(names[i]) == "result.json", filepath.Base(names[j]) == "result.json"
		if ri != rj {
			return ri
		}
		return names[i] < names[j]
	})
	return names
}

// errNotObject says an artifact is JSON but not an object of fields.
var errNotObject = errors.New("not a JSON object")

// scalarFields reads up to n top-level scalar fields (numbers, strings,
// booleans) of the JSON object in path, in file order, reading at most
// evidenceBytes of it.
func scalarFields(path string, n int) ([]Measured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, evidenceBytes))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotObject
	}
	var out []Measured
	for len(out) < n && dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, fmt.Errorf("read: %w", err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out, fmt.Errorf("read %v: %w", tok, err)
		}
		if v, ok := scalar(raw); ok {
			out = append(out, Measured{Field: fmt.Sprint(tok), Value: v})
		}
	}
	return out, nil
}

// scalar is a JSON number, string or boolean as text, cut to evidenceValueChars.
func scalar(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' || string(raw) == "null" {
		return "", false
	}
	s := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false
		}
	}
	if r := []rune(s); len(r) > evidenceValueChars {
		s = string(r[:evidenceValueChars-1]) + "…"
	}
	return s, true
}
