package benchtask

import (
	"encoding/json"
	"math"
)

// SchemaVersion is the version of the grade report's shape.
const SchemaVersion = "1"

// The tolerance rule of section 15: |actual − expected| ≤ atol + rtol·|expected|.
const (
	RTol = 1e-7
	ATol = 1e-8
)

// Check is one named comparison; its values never appear in a report.
type Check struct {
	Metric string `json:"metric"`
	Passed bool   `json:"passed"`
}

// Trial describes who produced the submission. Unknown figures are null.
type Trial struct {
	TrialID          string   `json:"trial_id"`
	Model            string   `json:"model"`
	Agent            string   `json:"agent"`
	WallSeconds      *float64 `json:"wall_seconds"`       // the trial's whole wall time
	FirstPassSeconds *float64 `json:"first_pass_seconds"` // seconds from its start to its first passing grade
	CostUSD          *float64 `json:"cost_usd"`           // reported cost of the trial
}

// Report is one grade (contract section 15).
type Report struct {
	SchemaVersion      string  `json:"schema_version"`
	Pack               string  `json:"pack"`
	Task               string  `json:"task"`
	PackVersion        string  `json:"pack_version"`
	Passed             bool    `json:"passed"`
	Checks             []Check `json:"checks"`
	IntactInputs       bool    `json:"intact_inputs"`
	FindingsPresent    bool    `json:"findings_present"`
	Error              *string `json:"error"`
	ExecutionBackend   string  `json:"execution_backend"`
	GradingWallSeconds float64 `json:"grading_wall_seconds"`
	Trial              Trial   `json:"trial"`
}

// consistent reports whether passed is what the checks, the inputs and the
// findings say: a forged pass (or fail) is not.
func (r Report) consistent() bool {
	return r.Passed == (r.IntactInputs && r.FindingsPresent && len(r.Checks) > 0 && allPassed(r.Checks))
}

func allPassed(checks []Check) bool {
	for _, c := range checks {
		if !c.Passed {
			return false
		}
	}
	return true
}

// FailedChecks lists the names of the checks that failed.
func (r Report) FailedChecks() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.Passed {
			out = append(out, c.Metric)
		}
	}
	return out
}

// matches applies the tolerance rule to one returned value: it must be a
// finite JSON number (not a boolean, string or null).
func matches(raw json.RawMessage, expected float64) bool {
	var x any
	if json.Unmarshal(raw, &x) != nil {
		return false
	}
	v, ok := x.(float64)
	return ok && !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v-expected) <= ATol+RTol*math.Abs(expected)
}

// caseChecks compares one case's returned values with the expected ones,
// each metric one check named prefix+metric; a missing key fails.
func caseChecks(prefix string, metrics []string, got map[string]json.RawMessage, want map[string]float64) []Check {
	out := make([]Check, 0, len(metrics))
	for _, m := range metrics {
		raw, ok := got[m]
		out = append(out, Check{Metric: prefix + m, Passed: ok && matches(raw, want[m])})
	}
	return out
}
