// Package benchtask is the bundled benchmark pack (contract section 15):
// small, fully specified numerical tasks an agent solves in a folder, graded
// by re-running the agent's code in the sandbox on the given cases and on
// fresh holdouts, against a trusted reference computed here in Go.
//
// # The pack
//
// Every task is one row of the task table (pack.go): its id, title,
// suggested seconds, the TASK.md text, the metrics a reducer returns, its
// given cases (deterministic, regenerated at prepare and at grading to
// check that the submission's inputs are intact), a holdout generator
// driven by a fresh random seed, and the trusted reference.
//
// # Grading
//
// [Grade] probes the chosen execution backend first (an unavailable one
// fails at once with the probe's reason), then runs the submission's
// reduce.py once per case through [sandbox.Run], each run seeing only
// runner.py (ours), a sealed copy of reduce.py and that one case under
// /work/case, so a reducer cannot read another case or keep state between
// them. Checks carry names, never values: `<case>:<metric>` for re-executed
// cases, `saved:<case>:<metric>` for the submission's result.json.
//
// # Leaderboard
//
// [Leaderboard] aggregates grade reports per model and agent: trials,
// passes, pass rate with its 95 % Wilson interval, median seconds to a
// first pass and seconds per success counting failed trials.
package benchtask
