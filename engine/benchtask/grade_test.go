package benchtask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
)

// needBubblewrap skips, saying so, where Bubblewrap cannot run here.
func needBubblewrap(t testing.TB) {
	t.Helper()
	if rep := sandbox.Probe(t.Context(), sandbox.Bubblewrap); !rep.Available {
		t.Skipf("bubblewrap is not available here: %s", rep.Reason)
	}
}

// submission prepares the task in a temporary folder and adds reduce.py,
// FINDINGS.md and (unless nil) result.json.
func submission(t testing.TB, reduce string, result []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trial")
	if _, err := Prepare("kepler-energy", dir); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{submittedFile: []byte(reduce), findingsFile: []byte("Drift grows with eccentricity.\n")}
	if result != nil {
		files[resultFile] = result
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func honestReducer(t testing.TB) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "e2e", "testdata", "bench", "honest.py"))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// TestGradeNeverLeaksHoldouts: a reducer that returns wrong values and a
// reducer that crashes quoting its whole input both fail, and the report
// holds neither the holdouts' expected values nor their input numbers —
// only the checks' names and, for the crash, its masked stderr.
func TestGradeNeverLeaksHoldouts(t *testing.T) {
	needBubblewrap(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const seed = 7
	holdouts, err := keplerHoldouts(seed, HoldoutCount)
	if err != nil {
		t.Fatal(err)
	}
	reducers := map[string]string{
		"wrong": "def reduce_case(d):\n    return {'max_rel_energy_error': 1.0, 'final_rel_angular_momentum_error': 1.0}\n",
		"crash": "import os\ndef reduce_case(d):\n    raise ValueError('bad row ' + open(os.path.join(d, 'orbit.csv')).read().splitlines()[-1])\n",
	}
	for name, src := range reducers {
		t.Run(name, func(t *testing.T) {
			dir := submission(t, src, []byte(`{"cases": {}}`))
			rep, err := Grade(t.Context(), GradeRequest{Task: "kepler-energy", Submission: dir, Backend: sandbox.Bubblewrap,
				SelfExe: self, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(rep)
			if rep.Passed || !rep.IntactInputs || !rep.FindingsPresent || !strings.Contains(string(out), "holdout-2:"+MetricAngular) {
				t.Fatalf("want a failed grade with named holdout checks: %s", out)
			}
			for _, h := range holdouts {
				for m, v := range h.Expected {
					if s := strconv.FormatFloat(v, 'g', 8, 64); strings.Contains(string(out), s[:8]) {
						t.Errorf("the report holds %s's expected %s (%s): %s", h.Name, m, s, out)
					}
				}
				lines := strings.Split(string(h.Files[orbitFile]), "\n")
				for _, field := range strings.Split(lines[len(lines)-2], ",")[1:] {
					if strings.Contains(string(out), field) {
						t.Errorf("the report holds a number of %s's input (%s)", h.Name, field)
					}
				}
			}
			if name == "crash" && (rep.Error == nil || !strings.Contains(*rep.Error, "holdout-0, holdout-1, holdout-2: reduce.py failed (exit 1)") ||
				!strings.Contains(*rep.Error, "ValueError: bad row <number>")) {
				t.Errorf("a crash must report the last lines of its stderr: %v", rep.Error)
			}
		})
	}
}

// givenResult is a correct result.json for the given cases.
func givenResult(t testing.TB) []byte {
	t.Helper()
	given, err := keplerGiven()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]map[string]float64{}
	for _, c := range given {
		cases[c.Name] = c.Expected
	}
	data, err := json.Marshal(map[string]any{"cases": cases})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// BenchmarkGrade measures, in one run, grading an honest submission (six
// sandboxed case runs under Bubblewrap, the reference, the checks) against
// the bare run of the same reducer on the same six cases with python3
// outside any sandbox, and reports both and their ratio.
func BenchmarkGrade(b *testing.B) {
	needBubblewrap(b)
	self, _ := os.Executable()
	dir := submission(b, honestReducer(b), givenResult(b))
	bare := bareRunner(b, dir)
	var ours, plain float64
	for b.Loop() {
		rep, err := Grade(b.Context(), GradeRequest{Task: "kepler-energy", Submission: dir, Backend: sandbox.Bubblewrap, SelfExe: self})
		if err != nil || !rep.Passed {
			b.Fatalf("%v %+v", err, rep)
		}
		ours += rep.GradingWallSeconds
		plain += bare()
	}
	n := float64(b.N)
	b.ReportMetric(ours/n*1000, "grade-ms/op")
	b.ReportMetric(plain/n*1000, "bare-ms/op")
	b.ReportMetric(ours/plain, "ratio")
	b.ReportMetric((ours-plain)/n/(2*HoldoutCount)*1000, "added-ms/case")
}

// bareRunner returns a function that runs runner.py on six cases (the
// given ones and three holdouts) as plain python3 processes, one per case
// as grading does, and returns the seconds taken.
func bareRunner(b *testing.B, dir string) func() float64 {
	b.Helper()
	given, _ := keplerGiven()
	unseen, _ := keplerHoldouts(3, HoldoutCount)
	var folders []string
	for i, c := range append(given, unseen...) {
		f := filepath.Join(b.TempDir(), fmt.Sprint(i))
		src, _ := os.ReadFile(filepath.Join(dir, submittedFile))
		for rel, data := range map[string][]byte{runnerName: []byte(runnerPy), reduceName: src, caseName + "/" + orbitFile: c.Files[orbitFile]} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(f, rel)), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(f, rel), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		folders = append(folders, f)
	}
	python := sandboxPython(b)
	return func() float64 { return runBare(b, python, folders) }
}

// TestGradeInterrupted: a grading whose context ends gives no report (an
// error, not a failed grade), so a stopped grading never blames the reducer.
func TestGradeInterrupted(t *testing.T) {
	needBubblewrap(t)
	self, _ := os.Executable()
	dir := submission(t, "import time\ndef reduce_case(d):\n    time.sleep(30)\n", givenResult(t))
	ctx, cancel := context.WithCancel(t.Context())
	req := GradeRequest{Task: "kepler-energy", Submission: dir, Backend: sandbox.Bubblewrap, SelfExe: self,
		Run: func(c context.Context, s sandbox.Spec) (sandbox.Result, error) {
			cancel() // the operator stops grading while the first case runs
			return sandbox.Run(c, s)
		}}
	if rep, err := Grade(ctx, req); err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("an interrupted grading returned %+v, %v; want context.Canceled", rep, err)
	}
}
