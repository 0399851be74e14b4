package engine

import (
	"time"

	"github.com/simjecture/simjecture/sandbox/machine"
)

// RemoteSamples are the process monitor's rows for the experiments of
// receipts running on a worker: one row each, at depth 1 under the
// supervisor, with its machine, host and job and its wall time since it
// started. The worker's processes are not sampled from here, so CPU and
// memory stay unknown (nil histories, zero figures, Remote set).
func RemoteSamples(receipts []Receipt, now time.Time) []ProcSample {
	var out []ProcSample
	for _, r := range receipts {
		if r.Status != ExpRunning || r.Machine == "" || r.Machine == machine.LocalID || r.Remote == nil {
			continue
		}
		s := ProcSample{Depth: 1, Command: r.Source, State: "R", Role: RoleExperiment, Experiment: r.ID,
			Backend: string(r.IsolationBackend), Remote: &RemoteProc{Machine: r.Machine, Host: r.Remote.Host, Job: r.Remote.Job}}
		if s.Command == "" {
			s.Command = r.Capability
		}
		if r.StartedAt != nil {
			s.Elapsed = max(now.Sub(*r.StartedAt).Round(time.Second), 0)
		}
		out = append(out, s)
	}
	return out
}
