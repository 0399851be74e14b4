package benchtask

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

// grade is a consistent report of one trial.
func grade(trial, model string, passed bool, wall, firstPass *float64) Report {
	return Report{Pack: PackName, Task: "kepler-energy", PackVersion: PackVersion, Passed: passed,
		Checks: []Check{{Metric: "mild:" + MetricEnergy, Passed: passed}}, IntactInputs: true, FindingsPresent: true,
		Trial: Trial{TrialID: trial, Model: model, Agent: "command", WallSeconds: wall, FirstPassSeconds: firstPass}}
}

// TestLeaderboardRows: trials, passes, the Wilson interval, the median
// time to a pass, seconds per success with failed trials' time counted,
// provisional rows, and a re-graded trial counted once.
func TestLeaderboardRows(t *testing.T) {
	t.Parallel()
	var in []Source
	for i, r := range []Report{
		grade("a1", "m-a", true, ptr(100), ptr(40)),
		grade("a2", "m-a", false, ptr(300), nil),
		grade("a3", "m-a", true, ptr(200), ptr(80)),
		grade("a3", "m-a", true, ptr(200), ptr(80)), // the same trial graded again
		grade("b1", "m-b", false, nil, nil),
	} {
		in = append(in, Source{From: string(rune('a' + i)), Report: r})
	}
	b, err := Leaderboard(in, 3)
	if err != nil {
		t.Fatal(err)
	}
	if b.Duplicates != 1 || len(b.Rows) != 2 {
		t.Fatalf("duplicates %d, rows %d; want 1 and 2: %+v", b.Duplicates, len(b.Rows), b)
	}
	a, bb := b.Rows[0], b.Rows[1]
	if a.Model != "m-a" || a.Trials != 3 || a.Passes != 2 || a.Provisional || math.Abs(a.PassRate-2.0/3) > 1e-15 {
		t.Errorf("row a: %+v", a)
	}
	if a.MedianSecondsToPass == nil || *a.MedianSecondsToPass != 60 || a.SecondsPerSuccess == nil || *a.SecondsPerSuccess != 300 {
		t.Errorf("row a: median to pass %v, seconds per success %v; want 60 and (100+300+200)/2 = 300", a.MedianSecondsToPass, a.SecondsPerSuccess)
	}
	if a.CostPerSuccessUSD != nil {
		t.Errorf("row a: an unknown cost must stay null, got %v", *a.CostPerSuccessUSD)
	}
	if bb.Passes != 0 || !bb.Provisional || bb.SecondsPerSuccess != nil || bb.MedianSecondsToPass != nil || bb.PassRate95.Low != 0 {
		t.Errorf("row b: %+v", bb)
	}
}

// TestLeaderboardRefuses: a forged pass, a trial graded twice with
// different outcomes, a report of another pack and a bad minimum.
func TestLeaderboardRefuses(t *testing.T) {
	t.Parallel()
	forged := grade("f", "m", true, nil, nil)
	forged.Checks = append(forged.Checks, Check{Metric: "holdout-0:" + MetricEnergy, Passed: false})
	noFindings := grade("g", "m", true, nil, nil)
	noFindings.FindingsPresent = false
	other := grade("o", "m", false, nil, nil)
	other.Pack = "another-pack"
	cases := []struct {
		name    string
		reports []Report
		minimum int
		want    string
	}{
		{"forged pass", []Report{forged}, 5, "inconsistent grade"},
		{"pass without findings", []Report{noFindings}, 5, "inconsistent grade"},
		{"conflicting duplicate", []Report{grade("d", "m", true, nil, nil), grade("d", "m", false, nil, nil)}, 5, "differently"},
		{"other pack", []Report{other}, 5, "not a grade report"},
		{"minimum", nil, 0, "minimum-trials"},
	}
	for _, c := range cases {
		var in []Source
		for _, r := range c.reports {
			in = append(in, Source{From: c.name + ".json", Report: r})
		}
		_, err := Leaderboard(in, c.minimum)
		if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a setup error with %q", c.name, err, c.want)
		}
	}
}

// TestFeedbackNamesChecksOnly: the feedback after a failed grade lists the
// failed checks by name (at most 30), the missing findings and changed
// inputs, and never a value; a pass says so.
func TestFeedbackNamesChecksOnly(t *testing.T) {
	t.Parallel()
	rep := grade("t", "m", false, nil, nil)
	rep.IntactInputs, rep.FindingsPresent = false, false
	for i := range 40 {
		rep.Checks = append(rep.Checks, Check{Metric: "holdout-" + string(rune('a'+i%26)) + ":" + MetricEnergy})
	}
	text := Feedback(rep, nil)
	for _, want := range []string{"FAILED", "Failed checks (41)", "mild:" + MetricEnergy, "raw/ were changed", "FINDINGS.md is missing"} {
		if !strings.Contains(text, want) {
			t.Errorf("feedback lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, MetricEnergy); n != maxFeedbackChecks {
		t.Errorf("feedback lists %d checks, want %d", n, maxFeedbackChecks)
	}
	if Feedback(grade("t", "m", true, nil, nil), nil) != "Grade: PASSED." {
		t.Error("a pass must say so")
	}
}
