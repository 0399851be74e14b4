package engine

import (
	"context"

	"github.com/simjecture/simjecture/sandbox"
)

// Execution backends as user interfaces show and probe them, from the
// sandbox's backend table (engine re-exports it: tui imports only engine).

// BackendProbe is one execution backend choice with its live probe result.
type BackendProbe struct {
	Backend     string // auto or a name from ExecutionBackends
	Available   bool
	Selected    string // for auto: the backend it picks
	Reason      string
	Remedy      string
	Warning     string
	Cooperative bool // not a security sandbox
}

// ExecutionBackend is one execution backend as user interfaces show it,
// from the sandbox's table.
type ExecutionBackend struct {
	Name        string
	Label       string // the new-study choice
	Short       string // the status-bar mode indicator
	Title       string // the warning pane's heading
	Column      string // a table column
	Explains    string // how experiments run, for the warning pane
	Warning     string // cooperative backends: contains "not a security sandbox"
	Cooperative bool   // not a security sandbox
	Preselect   bool   // a form may preselect it (auto may pick it)
}

// CooperativeNotice is the one-line warning for every cooperative backend.
const CooperativeNotice = sandbox.CooperativeNotice

// ExecutionBackends lists every execution backend in the order auto
// considers them and the new-study form shows them (after auto).
func ExecutionBackends() []ExecutionBackend {
	rows := sandbox.Backends()
	out := make([]ExecutionBackend, 0, len(rows))
	for _, r := range rows {
		out = append(out, ExecutionBackend{Name: string(r.Name), Label: r.Label, Short: r.Short, Title: r.Title,
			Column: r.Column, Explains: r.Explains, Warning: r.Warning, Cooperative: r.Cooperative, Preselect: r.AutoCandidate})
	}
	return out
}

// DescribeBackend returns the row of execution backend b; false for auto
// and unknown names.
func DescribeBackend(b string) (ExecutionBackend, bool) {
	for _, r := range ExecutionBackends() {
		if r.Name == b {
			return r, true
		}
	}
	return ExecutionBackend{}, false
}

// ProbeBackends probes auto and every concrete backend, in the order the
// new-study form shows them.
func ProbeBackends(ctx context.Context) []BackendProbe {
	order := []sandbox.Backend{sandbox.Auto}
	for _, r := range sandbox.Backends() {
		order = append(order, r.Name)
	}
	out := make([]BackendProbe, 0, len(order))
	for _, b := range order {
		r := sandbox.Select(ctx, b)
		out = append(out, BackendProbe{Backend: string(b), Available: r.Available && (b != sandbox.Auto || r.Selected != ""),
			Selected: string(r.Selected), Reason: r.Reason, Remedy: r.Remedy, Warning: r.Warning,
			Cooperative: sandbox.IsCooperative(b) || sandbox.IsCooperative(r.Selected)})
	}
	return out
}

// IsCooperativeBackend reports whether an execution backend is cooperative:
// not a security sandbox.
func IsCooperativeBackend(b string) bool { return sandbox.IsCooperative(sandbox.Backend(b)) }
