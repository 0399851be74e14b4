package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simjecture/simjecture/engine/benchtask"
)

// writeFile writes data to root/rel, making its folders, with mtime at.
func writeFile(t *testing.T, root, rel string, data []byte, at time.Time) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

func gradeJSON(t *testing.T, task, model string, passed ...bool) []byte {
	t.Helper()
	r := benchtask.Report{Task: task, Trial: benchtask.Trial{Model: model, Agent: "command"}, GradingWallSeconds: 1.5}
	all := true
	for i, p := range passed {
		r.Checks = append(r.Checks, benchtask.Check{Metric: string(rune('a' + i)), Passed: p})
		all = all && p
	}
	r.Passed = all
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestListBenchRunsFindsGradeReports: a grade report in a folder under the
// root and a `bench run` folder's grades/ are listed, newest first; a
// task's benchmark.json, a malformed file, a report too deep and a study
// folder's files are not.
func TestListBenchRunsFindsGradeReports(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	writeFile(t, root, "trial/grade.json", gradeJSON(t, "kepler-energy", "m1", true, true), t0)
	writeFile(t, root, "trial/benchmark.json", []byte(`{"pack":"simjecture-bench","task":"kepler-energy","trial_id":"x"}`), t0)
	writeFile(t, root, "runs/grades/trial-1.json", gradeJSON(t, "kepler-energy", "m2", true, false, true), t0.Add(time.Minute))
	writeFile(t, root, "runs/trial-1/notes.json", gradeJSON(t, "kepler-energy", "deep"), t0) // no checks, and not a grades folder
	writeFile(t, root, "bad/grade.json", []byte(`{"task": `), t0)
	writeFile(t, root, "a/b/c/grade.json", gradeJSON(t, "kepler-energy", "too deep", true), t0)
	study := Campaign{Dir: filepath.Join(root, "study")}
	rel, err := filepath.Rel(root, study.DB())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, rel, []byte("not read"), t0)
	writeFile(t, root, "study/grades/g.json", gradeJSON(t, "kepler-energy", "in a study", true), t0)
	got := ListBenchRuns(root)
	if len(got) != 2 {
		t.Fatalf("got %d reports, want 2: %+v", len(got), got)
	}
	if g := got[0]; g.Model != "m2" || g.Passed || g.ChecksPassed != 2 || g.Checks != 3 || g.File != filepath.Join(root, "runs/grades/trial-1.json") {
		t.Errorf("newest = %+v", g)
	}
	if g := got[1]; g.Model != "m1" || !g.Passed || g.ChecksPassed != 2 || g.Checks != 2 || g.Agent != "command" || g.GradeSeconds != 1.5 {
		t.Errorf("older = %+v", g)
	}
	if n := len(ListBenchRuns(filepath.Join(root, "missing"))); n != 0 {
		t.Errorf("a missing root lists %d reports", n)
	}
}
