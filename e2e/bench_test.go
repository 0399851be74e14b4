package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gradeReport is `bench grade`'s report (contract section 15), as far as
// the tests read it.
type gradeReport struct {
	Task             string  `json:"task"`
	PackVersion      string  `json:"pack_version"`
	Passed           bool    `json:"passed"`
	IntactInputs     bool    `json:"intact_inputs"`
	FindingsPresent  bool    `json:"findings_present"`
	Error            *string `json:"error"`
	ExecutionBackend string  `json:"execution_backend"`
	Checks           []struct {
		Metric string `json:"metric"`
		Passed bool   `json:"passed"`
	} `json:"checks"`
}

// failed lists the names of the failed checks.
func (g gradeReport) failed() []string {
	var out []string
	for _, c := range g.Checks {
		if !c.Passed {
			out = append(out, c.Metric)
		}
	}
	return out
}

func readGrade(t *testing.T, path string) gradeReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no grade report: %v", err)
	}
	var g gradeReport
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("grade report is not JSON: %v\n%s", err, data)
	}
	return g
}

func benchSource(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "bench", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// honestResult runs the honest reducer on raw/ outside the sandbox, as the
// agent would, for result.json.
func honestResult(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("python3", "reduce.py", "raw")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("honest reducer on raw/: %v", err)
	}
	return string(out)
}

// preparedTrial prepares kepler-energy in a new folder under parent and
// writes an honest submission into it: reduce.py, result.json, FINDINGS.md.
func preparedTrial(t *testing.T, parent string) string {
	t.Helper()
	dir := filepath.Join(parent, "trial")
	if r := sj(t, "", "bench", "prepare", "kepler-energy", "--output", dir); r.code != 0 {
		t.Fatalf("prepare: %s", r)
	}
	writeFile(t, filepath.Join(dir, "reduce.py"), benchSource(t, "honest.py"))
	writeFile(t, filepath.Join(dir, "result.json"), honestResult(t, dir))
	writeFile(t, filepath.Join(dir, "FINDINGS.md"), "The sharpest orbit drifts most in energy.\n")
	return dir
}

// replayReducer is the cheat of replay.py, fed the given cases' values
// keyed by their first rows.
func replayReducer(t *testing.T, dir string) string {
	t.Helper()
	var saved struct {
		Cases map[string]map[string]float64 `json:"cases"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	byRow := map[string]map[string]float64{}
	for name, v := range saved.Cases {
		csv, _ := os.ReadFile(filepath.Join(dir, "raw", name, "orbit.csv"))
		byRow[strings.Split(string(csv), "\n")[1]] = v
	}
	table, _ := json.Marshal(map[string]any{"by_first_row": byRow})
	return strings.Replace(benchSource(t, "replay.py"), "__SAVED__", string(table), 1)
}

// TestBenchGrade prepares kepler-energy and grades submissions under
// Bubblewrap: the honest one passes; a replay of result.json, inputs edited
// before or during grading, reading beyond its case, missing findings, a sleeper past the timeout
// and a crash fail, each for its own named reason.
func TestBenchGrade(t *testing.T) {
	t.Parallel()
	probe := sj(t, "", "doctor", "--execution-backend", "bubblewrap", "--json")
	if probe.code != 0 {
		t.Skipf("bubblewrap is not available here: %s", probe.stdout)
	}
	cases := []struct {
		name   string
		change func(t *testing.T, dir string)
		flags  []string
		check  func(t *testing.T, g gradeReport, r result)
	}{
		{"honest", nil, nil, func(t *testing.T, g gradeReport, r result) {
			if r.code != 0 || !g.Passed || len(g.Checks) != 18 || g.Error != nil || g.ExecutionBackend != "bubblewrap" {
				t.Errorf("an honest submission must pass all 18 checks under bubblewrap: %s", r)
			}
		}},
		{"replays result.json", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "reduce.py"), replayReducer(t, dir))
		}, nil, func(t *testing.T, g gradeReport, r result) {
			failed := strings.Join(g.failed(), " ")
			if r.code != 1 || g.Passed || strings.Contains(failed, "mild:") || !strings.Contains(failed, "holdout-0:") ||
				!strings.Contains(failed, "holdout-2:") {
				t.Errorf("a replay must pass the given cases and fail the holdouts (failed: %s): %s", failed, r)
			}
		}},
		{"edited raw", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "raw", "mild", "orbit.csv"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.WriteString("99,1,0,0,1\n")
			_ = f.Close()
		}, nil, func(t *testing.T, g gradeReport, r result) {
			if r.code != 1 || g.Passed || g.IntactInputs || g.Error == nil || !strings.Contains(*g.Error, "raw/") {
				t.Errorf("edited inputs must fail intact_inputs: %s", r)
			}
		}},
		{"edits its case while graded", func(t *testing.T, dir string) {
			src := "import os\n" + benchSource(t, "honest.py") +
				"\n_honest = reduce_case\ndef reduce_case(d):\n    p = os.path.join(d, 'orbit.csv')\n    os.chmod(p, 0o644)\n    open(p, 'a').write('9,1,0,0,1\\n')\n    return _honest(d)\n"
			writeFile(t, filepath.Join(dir, "reduce.py"), src)
		}, nil, func(t *testing.T, g gradeReport, r result) {
			if r.code != 1 || g.Passed || !g.IntactInputs || g.Error == nil || !strings.Contains(*g.Error, "changed its inputs") {
				t.Errorf("a reducer changing its case must fail: %s", r)
			}
		}},
		{"reads beyond its case", func(t *testing.T, dir string) {
			// It uses the submission's own result.json (by its host path) and
			// the other cases' folders: neither exists where it runs.
			src := "import json, os\n" + benchSource(t, "honest.py") + "\n_honest = reduce_case\ndef reduce_case(d):\n" +
				"    json.load(open(" + fmt.Sprintf("%q", filepath.Join(dir, "result.json")) + "))\n" +
				"    assert len(os.listdir(os.path.join(d, '..', '..', 'raw'))) == 3\n    return _honest(d)\n"
			writeFile(t, filepath.Join(dir, "reduce.py"), src)
		}, nil, func(t *testing.T, g gradeReport, r result) {
			if r.code != 1 || g.Passed || g.Error == nil || !strings.Contains(*g.Error, "FileNotFoundError") {
				t.Errorf("a reducer reading beyond its case must fail: %s", r)
			}
		}},
		{"no findings", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "FINDINGS.md")); err != nil {
				t.Fatal(err)
			}
		}, nil, func(t *testing.T, g gradeReport, r result) {
			if r.code != 1 || g.Passed || g.FindingsPresent || len(g.failed()) != 0 {
				t.Errorf("missing findings must fail with every check passing: %s", r)
			}
		}},
		{"sleeps past the timeout", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "reduce.py"), "import time\ndef reduce_case(d):\n    time.sleep(60)\n")
		}, []string{"--timeout", "2"}, func(t *testing.T, g gradeReport, r result) {
			if r.code != 1 || g.Passed || g.Error == nil || !strings.Contains(*g.Error, "timeout") {
				t.Errorf("a sleeper must fail naming the timeout: %s", r)
			}
		}},
		{"crashes", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "reduce.py"), "def reduce_case(d):\n    raise RuntimeError('no orbit here, said the reducer')\n")
		}, nil, func(t *testing.T, g gradeReport, r result) {
			if r.code != 1 || g.Error == nil || !strings.Contains(*g.Error, "RuntimeError: no orbit here, said the reducer") {
				t.Errorf("a crash must report the last lines of its stderr: %s", r)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			dir := preparedTrial(t, tmp)
			if tc.change != nil {
				tc.change(t, dir)
			}
			out := filepath.Join(tmp, "grade.json")
			args := append([]string{"bench", "grade", "kepler-energy", "--submission", dir, "--output", out, "--model", "m", "--agent", "a"}, tc.flags...)
			r := sj(t, "", args...)
			tc.check(t, readGrade(t, out), r)
		})
	}
}

// TestBenchSetupErrors: prepare into an existing folder and grade with a
// Bubblewrap that fails its probe (SIMJECTURE_BWRAP) exit 2 with one line,
// writing nothing; prepare needs no execution backend at all.
func TestBenchSetupErrors(t *testing.T) {
	t.Parallel()
	envv, _ := restrictedHost(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "trial")
	if r := sjEnv(t, envv, "bench", "prepare", "kepler-energy", "--output", dir); r.code != 0 {
		t.Fatalf("prepare on a host with no execution backend: %s", r)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "benchmark.json"))
	r := sjEnv(t, envv, "bench", "prepare", "kepler-energy", "--output", dir)
	after, _ := os.ReadFile(filepath.Join(dir, "benchmark.json"))
	if r.code != 2 || len(lines(r.stderr)) != 1 || string(before) != string(after) {
		t.Errorf("prepare into an existing folder: want exit 2, one line, the folder untouched: %s", r)
	}
	out := filepath.Join(tmp, "grade.json")
	r = sjEnv(t, envv, "bench", "grade", "kepler-energy", "--submission", dir, "--output", out)
	if r.code != 2 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, "ENOSPC") {
		t.Errorf("grade with a failing bubblewrap: want exit 2 and the probe's reason on one line: %s", r)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a setup error wrote %s", out)
	}
	for _, args := range [][]string{
		{"bench", "grade", "no-such-task", "--submission", dir, "--output", out},
		{"bench", "grade", "kepler-energy", "--submission", filepath.Join(tmp, "missing"), "--output", out, "--execution-backend", "auto"},
		{"bench", "prepare", "no-such-task", "--output", filepath.Join(tmp, "other")},
	} {
		if r := sjEnv(t, envv, args...); r.code != 2 || len(lines(r.stderr)) != 1 {
			t.Errorf("%v: want exit 2 and one line: %s", args, r)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "other")); err == nil {
		t.Error("prepare of an unknown task wrote its folder")
	}
}

// TestBenchGradeCooperative grades an honest submission under
// process-cooperative as uid 65534 (the cooperative backends refuse root).
func TestBenchGradeCooperative(t *testing.T) {
	t.Parallel()
	tmp, exe := nobodyBinary(t)
	dir := preparedTrial(t, tmp)
	if err := filepath.Walk(tmp, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "grade.json")
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "env", "HOME="+tmp, "TMPDIR="+tmp,
		exe, "bench", "grade", "kepler-energy", "--submission", dir, "--output", out, "--execution-backend", "process-cooperative")
	cmd.Env = env()
	got, err := cmd.CombinedOutput()
	g := readGrade(t, out)
	if err != nil || !g.Passed || g.ExecutionBackend != "process-cooperative" {
		t.Errorf("honest submission under process-cooperative as uid 65534: %v\n%s", err, got)
	}
}

// nobodyBinary skips unless this test can drop to uid 65534 (root and
// setpriv), and returns a folder that account can use and a copy of the
// binary in it.
func nobodyBinary(t *testing.T) (tmp, exe string) {
	t.Helper()
	switch _, err := exec.LookPath("setpriv"); {
	case os.Geteuid() != 0:
		t.Skip("needs root to drop to uid 65534 with setpriv")
	case err != nil:
		t.Skip("setpriv is not installed")
	}
	tmp = nobodyDir(t)
	exe = filepath.Join(tmp, "simjecture")
	copyExec(t, bin, exe)
	return tmp, exe
}

// wilsonRoots is the 95 % Wilson interval worked out independently of the
// product: the two roots p of (k/n − p)² = z²·p(1−p)/n.
func wilsonRoots(k, n int) (lo, hi float64) {
	const z = 1.959963984540054
	fn, ph := float64(n), float64(k)/float64(n)
	a, b, c := fn+z*z, -(2*fn*ph + z*z), fn*ph*ph
	d := b*b - 4*a*c
	return (-b - sqrt(d)) / (2 * a), (-b + sqrt(d)) / (2 * a)
}

// sqrt is Newton's square root, so the table owes nothing to math either.
func sqrt(x float64) float64 {
	if x <= 0 {
		return 0
	}
	r := x
	for range 100 {
		r = (r + x/r) / 2
	}
	return r
}

// syntheticGrade is a consistent grade report of one trial.
func syntheticGrade(model, trial string, passed bool, wall float64) map[string]any {
	return map[string]any{"schema_version": "1", "pack": "simjecture-bench", "task": "kepler-energy", "pack_version": "1.0.0",
		"passed": passed, "checks": []map[string]any{{"metric": "mild:max_rel_energy_error", "passed": passed}},
		"intact_inputs": true, "findings_present": true, "error": nil, "execution_backend": "bubblewrap",
		"grading_wall_seconds": 0.5, "trial": map[string]any{"trial_id": trial, "model": model, "agent": "command",
			"wall_seconds": wall, "first_pass_seconds": nil, "cost_usd": nil}}
}

// TestBenchLeaderboard: 0/5, 3/5 and 5/5 passes give the Wilson intervals
// of an independent table (and, to four decimals, the published
// values); a folder, a list and single files are read; a duplicate is
// counted once; a forged pass is refused with exit 2.
func TestBenchLeaderboard(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	folder := filepath.Join(tmp, "grades")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	for model, passes := range map[string]int{"none": 0, "three": 3, "all": 5} {
		for i := range 5 {
			g := syntheticGrade(model, fmt.Sprintf("%s-%d", model, i), i < passes, 100)
			data, _ := json.Marshal(g)
			writeFile(t, filepath.Join(folder, fmt.Sprintf("%s-%d.json", model, i)), string(data))
			list = append(list, g)
		}
	}
	writeFile(t, filepath.Join(folder, "benchmark.json"), `{"pack": "simjecture-bench", "task": "kepler-energy"}`)
	data, _ := json.Marshal(list[:2])
	writeFile(t, filepath.Join(tmp, "again.json"), string(data)) // two trials graded again
	out := filepath.Join(tmp, "board.json")
	r := sj(t, "", "bench", "leaderboard", "--reports", folder, filepath.Join(tmp, "again.json"), "--output", out)
	if r.code != 0 {
		t.Fatalf("leaderboard: %s", r)
	}
	var board struct {
		Duplicates int `json:"duplicates"`
		Rows       []struct {
			Model      string  `json:"model"`
			Trials     int     `json:"trials"`
			Passes     int     `json:"passes"`
			PassRate   float64 `json:"pass_rate"`
			PassRate95 struct {
				Low  float64 `json:"low"`
				High float64 `json:"high"`
			} `json:"pass_rate_95"`
			SecondsPerSuccess *float64 `json:"seconds_per_success"`
			Provisional       bool     `json:"provisional"`
		} `json:"rows"`
	}
	saved, _ := os.ReadFile(out)
	if err := json.Unmarshal(saved, &board); err != nil || len(board.Rows) != 3 || board.Duplicates != 2 {
		t.Fatalf("want 3 rows and 2 duplicates in --output: %v\n%s", err, saved)
	}
	published := map[int][2]float64{0: {0, 0.4345}, 3: {0.2307, 0.8824}, 5: {0.5655, 1}}
	for _, row := range board.Rows {
		lo, hi := wilsonRoots(row.Passes, row.Trials)
		pub := published[row.Passes]
		if row.Trials != 5 || row.Provisional || abs(row.PassRate95.Low-lo) > 1e-12 || abs(row.PassRate95.High-hi) > 1e-12 ||
			abs(lo-pub[0]) > 1e-4 || abs(hi-pub[1]) > 1e-4 {
			t.Errorf("%s: %d/%d, interval [%v, %v], want [%v, %v] (published %v)", row.Model, row.Passes, row.Trials,
				row.PassRate95.Low, row.PassRate95.High, lo, hi, pub)
		}
		if row.Passes > 0 && (row.SecondsPerSuccess == nil || abs(*row.SecondsPerSuccess-500/float64(row.Passes)) > 1e-9) {
			t.Errorf("%s: seconds per success %v, want 500 s over %d passes", row.Model, row.SecondsPerSuccess, row.Passes)
		}
	}
	forged := syntheticGrade("forger", "f-1", true, 10)
	forged["checks"] = []map[string]any{{"metric": "holdout-0:max_rel_energy_error", "passed": false}}
	data, _ = json.Marshal(forged)
	writeFile(t, filepath.Join(tmp, "forged.json"), string(data))
	r = sj(t, "", "bench", "leaderboard", "--reports", filepath.Join(tmp, "forged.json"), "--reports", folder)
	if r.code != 2 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, "forged.json") || r.stdout != "" {
		t.Errorf("a forged pass must be refused with exit 2 naming its file: %s", r)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
