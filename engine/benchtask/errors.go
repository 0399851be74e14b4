package benchtask

import "errors"

// ErrSetup marks a setup error: an unknown task, an existing prepare
// folder, no working execution backend, an unreadable submission, or grade
// reports the leaderboard cannot use. The command line exits 2 and writes
// nothing.
var ErrSetup = errors.New("benchmark setup error")
