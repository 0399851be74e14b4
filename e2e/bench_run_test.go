package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBenchRun runs two trials of kepler-energy with a command agent that
// fails its first turn and, told which checks failed, passes its second:
// each trial is graded after every turn, the feedback names failed checks
// and holds no number, and the grades and the leaderboard say 2 of 2 with
// the time to the first pass. An agent that changes nothing ends its trial
// after three idle turns instead of looping until the deadline.
func TestBenchRun(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap", "--json"); r.code != 0 {
		t.Skipf("bubblewrap is not available here: %s", r.stdout)
	}
	tmp := t.TempDir()
	exe := filepath.Join(tmp, "agent.py")
	copyExec(t, filepath.Join("testdata", "bench", "agent.py"), exe)
	honest, _ := filepath.Abs(filepath.Join("testdata", "bench", "honest.py"))
	out := filepath.Join(tmp, "run")
	r := sjEnv(t, append(env(), "BENCH_HONEST="+honest), "bench", "run", "kepler-energy", "--output", out, "--trials", "2",
		"--backend", "command", "--executable", exe, "--model", "scripted-m", "--wall-seconds", "120", "--turn-seconds", "60")
	if r.code != 0 {
		t.Fatalf("bench run: %s", r)
	}
	var board struct {
		Rows []struct {
			Model, Agent   string
			Trials, Passes int
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &board); err != nil || len(board.Rows) != 1 || board.Rows[0].Passes != 2 ||
		board.Rows[0].Trials != 2 || board.Rows[0].Model != "scripted-m" || board.Rows[0].Agent != "command" {
		t.Fatalf("want one row, 2 of 2 by scripted-m/command: %v\n%s", err, r)
	}
	var g struct {
		Passed bool `json:"passed"`
		Trial  struct {
			WallSeconds      *float64 `json:"wall_seconds"`
			FirstPassSeconds *float64 `json:"first_pass_seconds"`
		} `json:"trial"`
	}
	data, _ := os.ReadFile(filepath.Join(out, "grades", "trial-2.json"))
	if err := json.Unmarshal(data, &g); err != nil || !g.Passed || g.Trial.FirstPassSeconds == nil || g.Trial.WallSeconds == nil ||
		*g.Trial.FirstPassSeconds > *g.Trial.WallSeconds {
		t.Errorf("trial 2's grade must pass with its first-pass and wall seconds: %v\n%s", err, data)
	}
	feedback, _ := os.ReadFile(filepath.Join(out, "logs", "trial-1", "turn-1", "feedback.txt"))
	prompt, _ := os.ReadFile(filepath.Join(out, "logs", "trial-1", "turn-2", "prompt.txt"))
	for _, text := range []string{string(feedback), string(prompt)} {
		if !strings.Contains(text, "FAILED") || !strings.Contains(text, "holdout-0:max_rel_energy_error") ||
			regexp.MustCompile(`\d\.\d|\de-\d`).MatchString(text) {
			t.Errorf("feedback must name the failed checks and hold no value:\n%s", text)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "logs", "trial-1", "turn-3")); err == nil {
		t.Error("a trial went on after its passing turn")
	}
	idle := filepath.Join(tmp, "idle")
	r = sj(t, "", "bench", "run", "kepler-energy", "--output", idle, "--backend", "command", "--executable", "/bin/true",
		"--wall-seconds", "120", "--turn-seconds", "60")
	_, third := os.Stat(filepath.Join(idle, "logs", "trial-1", "turn-3"))
	_, fourth := os.Stat(filepath.Join(idle, "logs", "trial-1", "turn-4"))
	if r.code != 0 || third != nil || fourth == nil || !strings.Contains(r.stdout, `"passes": 0`) {
		t.Errorf("an agent that changes nothing must end its trial after 3 idle turns, failed: %s", r)
	}
	r = sj(t, "", "bench", "run", "kepler-energy", "--output", filepath.Join(tmp, "other"), "--backend", "command")
	if r.code != 2 || !strings.Contains(r.stderr, "--executable") || len(lines(r.stderr)) != 1 {
		t.Errorf("a command backend without --executable: want exit 2 naming the flag: %s", r)
	}
	if r = sj(t, "", "bench", "run", "kepler-energy", "--output", out, "--backend", "command", "--executable", exe); r.code != 2 {
		t.Errorf("bench run into an existing folder: want exit 2: %s", r)
	}
}
