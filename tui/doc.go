// Package tui presents a study to the operator: the headless status line and
// JSONL event stream of `--batch` (this file set), and the Bubble Tea
// terminal UI. It turns engine events into view state; it does no study
// I/O of its own beyond reading through engine.View.
package tui
