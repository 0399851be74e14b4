package benchtask

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// Files of a prepared task folder.
const (
	TaskFile      = "TASK.md"
	BenchmarkFile = "benchmark.json"
	RawDir        = "raw"
)

// Benchmark is benchmark.json of a prepared task folder.
type Benchmark struct {
	Pack                 string            `json:"pack"`
	Version              string            `json:"version"`
	Task                 string            `json:"task"`
	TrialID              string            `json:"trial_id"`
	SuggestedWallSeconds int               `json:"suggested_wall_seconds"`
	Inputs               map[string]string `json:"inputs"` // raw/<case>/<file> → sha256
}

// Prepare writes task id into dir, which must not exist: TASK.md,
// benchmark.json and the given cases under raw/. It needs no execution
// backend. An existing dir is refused (ErrSetup) and left untouched; a
// failure part-way removes what it wrote.
func Prepare(id, dir string) (Benchmark, error) {
	t, err := Find(id)
	if err != nil {
		return Benchmark{}, err
	}
	cases, err := t.Given()
	if err != nil {
		return Benchmark{}, fmt.Errorf("task %s: %w", id, err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return Benchmark{}, fmt.Errorf("--output %s: the folder exists (prepare writes a new one): %w", dir, ErrSetup)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return Benchmark{}, fmt.Errorf("prepare: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Benchmark{}, fmt.Errorf("--output %s: the folder exists (prepare writes a new one): %w", dir, ErrSetup)
		}
		return Benchmark{}, fmt.Errorf("prepare: %w", err)
	}
	b, err := writeTask(t, cases, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return Benchmark{}, err
	}
	return b, nil
}

func writeTask(t Task, cases []Case, dir string) (Benchmark, error) {
	trial, err := newTrialID()
	if err != nil {
		return Benchmark{}, err
	}
	b := Benchmark{Pack: PackName, Version: PackVersion, Task: t.ID, TrialID: trial,
		SuggestedWallSeconds: t.SuggestedSeconds, Inputs: inputHashes(cases)}
	for _, c := range cases {
		for rel, data := range c.Files {
			if err := writeFile(filepath.Join(dir, RawDir, c.Name, rel), data); err != nil {
				return b, err
			}
		}
	}
	meta, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return b, fmt.Errorf("prepare: %w", err)
	}
	if err := writeFile(filepath.Join(dir, TaskFile), []byte(t.Contract)); err != nil {
		return b, err
	}
	return b, writeFile(filepath.Join(dir, BenchmarkFile), append(meta, '\n'))
}

// inputHashes maps raw/<case>/<file> to its sha256 for every given file.
func inputHashes(cases []Case) map[string]string {
	out := map[string]string{}
	for _, c := range cases {
		for rel, data := range c.Files {
			sum := sha256.Sum256(data)
			out[path.Join(RawDir, c.Name, rel)] = hex.EncodeToString(sum[:])
		}
	}
	return out
}

// sortedKeys lists the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	return nil
}

func newTrialID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("trial id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
