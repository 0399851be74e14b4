package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// File tool limits.
const (
	maxWriteBytes = 1 << 20
	maxReadBytes  = 64 << 10
	maxListed     = 500
)

type fileToolSpec struct {
	name, description string
	params            map[string]any
}

func pathParam(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

var fileToolSpecs = []fileToolSpec{
	{"write_file", "Write a text file under research/ (programs and inputs for lab run), replacing it.", map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"path", "content"},
		"properties": map[string]any{"path": pathParam("relative path under research/"), "content": map[string]any{"type": "string"}},
	}},
	{"read_file", "Read a text file under research/, or experiments/ID/FILE (an experiment's collected files).", map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"path"},
		"properties": map[string]any{"path": pathParam("relative path under research/, or experiments/ID/FILE")},
	}},
	{"list_files", "List a folder under research/ (default) or experiments/ID.", map[string]any{
		"type": "object", "additionalProperties": false,
		"properties": map[string]any{"path": pathParam("relative folder; empty for research/")},
	}},
}

// fileTools reads and writes files confined to the research folder (and
// reads experiments/ of the study); os.Root refuses any escape, symlinks
// included.
type fileTools struct {
	research, study *os.Root
}

func openFileTools(dir, study string) (*fileTools, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("research folder: %w", err)
	}
	f := &fileTools{research: r}
	if study != "" {
		if s, err := os.OpenRoot(study); err == nil {
			f.study = s
		}
	}
	return f, nil
}

func (f *fileTools) Close() {
	_ = f.research.Close()
	if f.study != nil {
		_ = f.study.Close()
	}
}

func (f *fileTools) has(name string) bool {
	return name == "write_file" || name == "read_file" || name == "list_files"
}

func (f *fileTools) run(name string, raw []byte) string {
	var a struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return refusal(name + ": " + err.Error())
	}
	var result any
	var err error
	switch name {
	case "write_file":
		result, err = f.write(a.Path, a.Content)
	case "read_file":
		result, err = f.read(a.Path)
	default:
		result, err = f.list(a.Path)
	}
	if err != nil {
		return refusal(name + ": " + err.Error())
	}
	return success(result)
}

// resolve picks the root of a relative path: experiments/… reads from the
// study, anything else is under research/.
func (f *fileTools) resolve(p string, write bool) (*os.Root, string, error) {
	clean := path.Clean(strings.TrimSpace(p))
	clean = strings.TrimPrefix(clean, "research/")
	switch {
	case p == "" && !write:
		return f.research, ".", nil
	case clean == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../"):
		return nil, "", fmt.Errorf("path %q must be relative, under research/", p)
	case !write && (clean == "experiments" || strings.HasPrefix(clean, "experiments/")) && f.study != nil:
		return f.study, clean, nil
	}
	return f.research, clean, nil
}

func (f *fileTools) write(p string, content *string) (any, error) {
	if content == nil {
		return nil, errors.New("content is required")
	}
	if len(*content) > maxWriteBytes {
		return nil, fmt.Errorf("content is larger than %d bytes", maxWriteBytes)
	}
	root, rel, err := f.resolve(p, true)
	if err != nil {
		return nil, err
	}
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	if err := root.WriteFile(rel, []byte(*content), 0o644); err != nil {
		return nil, err
	}
	return map[string]any{"path": rel, "bytes": len(*content)}, nil
}

func (f *fileTools) read(p string) (any, error) {
	root, rel, err := f.resolve(p, false)
	if err != nil {
		return nil, err
	}
	file, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxReadBytes+1))
	if err != nil {
		return nil, err
	}
	out := map[string]any{"path": p, "truncated": len(b) > maxReadBytes}
	out["content"] = string(b[:min(len(b), maxReadBytes)])
	return out, nil
}

func (f *fileTools) list(p string) (any, error) {
	root, rel, err := f.resolve(p, false)
	if err != nil {
		return nil, err
	}
	dir, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	entries, err := dir.ReadDir(maxListed)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return map[string]any{"path": rel, "entries": names}, nil
}
