package benchtask

import (
	"fmt"
	"slices"
)

// The bundled pack.
const (
	PackName    = "simjecture-bench"
	PackVersion = "1.0.0"
)

// Case is one input folder of a task: files by path relative to the case
// folder, and the trusted reference's expected metrics.
type Case struct {
	Name     string
	Files    map[string][]byte
	Expected map[string]float64
}

// Task is one row of the pack: everything prepare, grade and list need.
type Task struct {
	ID               string
	Title            string
	SuggestedSeconds int
	Contract         string   // the TASK.md text
	Metrics          []string // the keys reduce_case returns, every one checked
	// Given are the cases written under raw/ by prepare, regenerated
	// deterministically at grading to check that the inputs are intact.
	Given func() ([]Case, error)
	// Holdouts are count fresh cases made from seed, unseen by the agent.
	Holdouts func(seed uint64, count int) ([]Case, error)
}

// tasks is the pack's table; a test proves every row is fully wired.
var tasks = []Task{keplerTask}

// Tasks lists the pack's tasks in table order.
func Tasks() []Task { return slices.Clone(tasks) }

// Find returns the task named id, or an error wrapping ErrSetup.
func Find(id string) (Task, error) {
	for _, t := range tasks {
		if t.ID == id {
			return t, nil
		}
	}
	return Task{}, fmt.Errorf("unknown task %q (see simjecture bench list): %w", id, ErrSetup)
}

// TaskIDs lists the ids of the pack's tasks, for help texts.
func TaskIDs() []string {
	out := make([]string, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, t.ID)
	}
	return out
}
