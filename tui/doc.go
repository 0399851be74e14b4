// Package tui presents a study to the operator: the headless status line and
// JSONL event stream of `--batch` (headless.go), and the Bubble Tea
// terminal UI. It turns engine events into view state; it does no study
// I/O of its own beyond what it asks the engine for.
//
// # The terminal UI
//
// Run shows the home screen (studies under the workspace root), the
// new-study form and its contract review, and the study dashboard with its
// process monitor and isolation warning. The root Model only routes; each
// screen is one file (home.go, newstudy.go, review.go, dashboard*.go) with
// an Update that dispatches to handleX methods and a pure View.
//
// # Rules
//
// Update never does I/O: everything that touches the engine goes through
// the Study and Workspace interfaces, and only inside tea.Cmds. Engine
// events reach the program through one Bridge goroutine that calls
// Program.Send behind a bounded buffer: ordinary events may be dropped
// (counted; the dashboard re-reads the snapshot anyway), terminal events
// never are. Every message about a study carries the generation of the
// dashboard that asked for it, and stale ones are ignored. docs/tui.md is
// the full rulebook.
package tui
