package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/simjecture/simjecture/engine/benchtask"
)

// BenchEntry is one grade report the workspace home lists: a benchmark
// trial's task, who solved it, and its grade.
type BenchEntry struct {
	File         string    // the report's file
	Task         string    // the task id
	Model, Agent string    // as the grade recorded them ("" when not given)
	Passed       bool      // the grade's verdict
	ChecksPassed int       // checks that passed
	Checks       int       // checks in all
	WallSeconds  *float64  // the trial's wall time, when the report has it
	GradeSeconds float64   // how long grading took
	ModTime      time.Time // when the report was written
}

// maxBenchReport bounds a file read as a grade report.
const maxBenchReport = 4 << 20

// ListBenchRuns finds the grade reports in the folders the home scans for
// studies (the root and its subfolders, one level down, that are not
// studies): each *.json file directly in such a folder, or in its grades/
// folder (as `bench run` writes them), that is a grade report (it names a
// task and has checks). Other files are skipped, never an error. Newest
// first.
func ListBenchRuns(root string) []BenchEntry {
	var out []BenchEntry
	var scan func(dir string, depth int)
	scan = func(dir string, depth int) {
		out = append(out, benchReportsIn(dir)...)
		out = append(out, benchReportsIn(filepath.Join(dir, "grades"))...)
		entries, err := os.ReadDir(dir)
		if err != nil || depth >= 1 {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "grades" && !(Campaign{Dir: p}).Exists() {
				scan(p, depth+1)
			}
		}
	}
	scan(root, 0)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ModTime.After(out[j].ModTime) })
	return out
}

// benchReportsIn reads the grade reports directly in dir.
func benchReportsIn(dir string) []BenchEntry {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []BenchEntry
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if b, ok := readBenchReport(filepath.Join(dir, e.Name())); ok {
			out = append(out, b)
		}
	}
	return out
}

// readBenchReport reads one file as a grade report.
func readBenchReport(p string) (BenchEntry, bool) {
	info, err := os.Stat(p)
	if err != nil || info.Size() > maxBenchReport {
		return BenchEntry{}, false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return BenchEntry{}, false
	}
	var r benchtask.Report
	if json.Unmarshal(data, &r) != nil || r.Task == "" || len(r.Checks) == 0 {
		return BenchEntry{}, false
	}
	b := BenchEntry{File: p, Task: r.Task, Model: r.Trial.Model, Agent: r.Trial.Agent, Passed: r.Passed,
		Checks: len(r.Checks), WallSeconds: r.Trial.WallSeconds, GradeSeconds: r.GradingWallSeconds, ModTime: info.ModTime()}
	for _, c := range r.Checks {
		if c.Passed {
			b.ChecksPassed++
		}
	}
	return b, true
}
