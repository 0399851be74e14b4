package benchtask

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/simjecture/simjecture/engine/jsonerr"
)

// maxReportBytes bounds one file of grade reports.
const maxReportBytes = 16 << 20

// LoadReports reads grade reports from files and folders. A file holds one
// report, a JSON array of them, or {"reports": [...]}; a folder is searched
// recursively for *.json files, skipping those that are not grade reports
// (such as a task's benchmark.json). An unreadable or malformed file named
// directly is refused (ErrSetup).
func LoadReports(paths []string) ([]Source, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("--reports: name at least one report file or folder: %w", ErrSetup)
	}
	var out []Source
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("--reports: %w: %w", err, ErrSetup)
		}
		if !info.IsDir() {
			rs, err := readReports(p)
			if err != nil {
				return nil, err
			}
			out = append(out, rs...)
			continue
		}
		rs, err := walkReports(p)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

func walkReports(dir string) ([]Source, error) {
	var out []Source
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("--reports: %w: %w", err, ErrSetup)
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".json") || !d.Type().IsRegular() || !looksLikeGrade(p) {
			return nil
		}
		rs, err := readReports(p)
		out = append(out, rs...)
		return err
	})
	return out, err
}

// looksLikeGrade reports whether a file in a folder holds grade reports:
// it names a task and checks, or is a list.
func looksLikeGrade(p string) bool {
	data, err := os.ReadFile(p)
	if err != nil || len(data) > maxReportBytes {
		return true // readReports says what is wrong
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return bytes.HasPrefix(bytes.TrimSpace(data), []byte("["))
	}
	_, checks := probe["checks"]
	_, reports := probe["reports"]
	return checks || reports
}

func readReports(p string) ([]Source, error) {
	info, err := os.Stat(p)
	if err == nil && info.Size() > maxReportBytes {
		err = fmt.Errorf("larger than %d bytes", maxReportBytes)
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(p)
	}
	if err != nil {
		return nil, fmt.Errorf("--reports %s: %w: %w", p, err, ErrSetup)
	}
	var list []Report
	trimmed := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(trimmed, []byte("[")):
		err = json.Unmarshal(trimmed, &list)
	case isBundle(trimmed):
		var bundle struct {
			Reports []Report `json:"reports"`
		}
		err = json.Unmarshal(trimmed, &bundle)
		list = bundle.Reports
	default:
		var r Report
		err = json.Unmarshal(trimmed, &r)
		list = []Report{r}
	}
	if err != nil {
		return nil, fmt.Errorf("--reports %s: not grade reports: %s: %w", p, jsonerr.Problem(data, err), ErrSetup)
	}
	out := make([]Source, 0, len(list))
	for i, r := range list {
		from := p
		if len(list) > 1 {
			from = fmt.Sprintf("%s[%d]", p, i)
		}
		out = append(out, Source{From: from, Report: r})
	}
	return out, nil
}

// isBundle reports whether an object's top level has a "reports" key.
func isBundle(data []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return false
	}
	_, ok := probe["reports"]
	return ok
}
