package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/machine"
)

// RemoteSamples are the process monitor's rows for the experiments of
// receipts running on a worker: one row each, at depth 1 under the
// supervisor, with its machine, host (a Slurm job's node) and job and its
// wall time since it started. An experiment with live figures in usage
// (sampled about once a second on the SSH worker or the Slurm node:
// RemoteUsage) shows its tree's CPU, memory and their histories; one
// without (before the first figures arrive) keeps zero figures and nil
// histories, with Remote.Sampled false.
func RemoteSamples(receipts []Receipt, now time.Time, usage map[string]RemoteUsage) []ProcSample {
	var out []ProcSample
	for _, r := range receipts {
		if r.Status != ExpRunning || r.Machine == "" || r.Machine == machine.LocalID || r.Remote == nil {
			continue
		}
		s := ProcSample{Depth: 1, Command: r.Source, State: "R", Role: RoleExperiment, Experiment: r.ID,
			Backend: string(r.IsolationBackend), Remote: &RemoteProc{Machine: r.Machine, Host: cmp.Or(r.Remote.Host, r.Remote.Node), Job: r.Remote.Job}}
		if s.Command == "" {
			s.Command = r.Capability
		}
		if r.StartedAt != nil {
			s.Elapsed = max(now.Sub(*r.StartedAt).Round(time.Second), 0)
		}
		if u, ok := usage[r.ID]; ok {
			s.CPUPercent, s.RSSBytes = u.CPUPercent, u.RSSBytes
			s.CPUHistory, s.RSSHistory = u.CPUHistory, u.RSSHistory
			s.Remote.Sampled, s.Remote.Processes = true, u.Processes
		}
		out = append(out, s)
	}
	return out
}

// RemoteUsage is what the process monitor knows of an experiment running
// on a worker: the figures of its whole process tree there, with the last
// ProcHistory of them, oldest first. Live only: never recorded.
type RemoteUsage struct {
	CPUPercent float64   `json:"cpu_percent"` // between the last two samples, of one core
	CPUHistory []float64 `json:"cpu_history"`
	RSSBytes   int64     `json:"rss_bytes"`
	RSSHistory []int64   `json:"rss_history"`
	Processes  int       `json:"processes"`
}

// remoteLive holds the live figures of the executor's experiments on
// workers, from their machines' usage reports (sandbox.Spec.Usage), until
// each run returns. Its zero value is ready; it is safe for concurrent use.
type remoteLive struct {
	mu   sync.Mutex
	exps map[string]*remoteTrack
}

type remoteTrack struct {
	prev sandbox.Usage
	u    RemoteUsage
}

// add records experiment id's latest figures.
func (l *remoteLive) add(id string, u sandbox.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.exps == nil {
		l.exps = map[string]*remoteTrack{}
	}
	t := l.exps[id]
	if t == nil {
		t = &remoteTrack{}
		l.exps[id] = t
	}
	cpu := u.CPUPercent(t.prev)
	t.prev = u
	t.u.CPUPercent, t.u.RSSBytes, t.u.Processes = cpu, u.RSSBytes, u.Processes
	t.u.CPUHistory = lastN(append(t.u.CPUHistory, cpu), ProcHistory)
	t.u.RSSHistory = lastN(append(t.u.RSSHistory, u.RSSBytes), ProcHistory)
}

// drop forgets experiment id: its run returned.
func (l *remoteLive) drop(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.exps, id)
}

// snapshot copies the figures, by experiment.
func (l *remoteLive) snapshot() map[string]RemoteUsage {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]RemoteUsage, len(l.exps))
	for id, t := range l.exps {
		u := t.u
		u.CPUHistory = append([]float64(nil), u.CPUHistory...)
		u.RSSHistory = append([]int64(nil), u.RSSHistory...)
		out[id] = u
	}
	return out
}

// lastN keeps the last n values of s, in a slice of its own when it cut.
func lastN[T any](s []T, n int) []T {
	if len(s) <= n {
		return s
	}
	return append([]T(nil), s[len(s)-n:]...)
}

// RemoteUsage is the live figures of the study's experiments running on
// workers that report them, by experiment id.
func (sv *Supervisor) RemoteUsage() map[string]RemoteUsage { return sv.exec.live.snapshot() }

// RemoteUsageOf asks the live supervisor of c, in this process or another,
// for RemoteUsage through its lab socket; with none answering it is an
// error, and the process monitor shows no remote figures.
func RemoteUsageOf(ctx context.Context, c Campaign) (map[string]RemoteUsage, error) {
	conn, err := dialLab(c)
	if err != nil {
		return nil, fmt.Errorf("remote usage: %w", err)
	}
	defer conn.Close()
	cl := newLabClient(c, conn)
	resp, err := cl.roundTrip(ctx, labRequest{Usage: true})
	if err != nil {
		return nil, fmt.Errorf("remote usage: %w", err)
	}
	if !resp.OK {
		return nil, fmt.Errorf("remote usage: %s", resp.Error)
	}
	var out map[string]RemoteUsage
	if err := json.Unmarshal(resp.Result, &out); err != nil {
		return nil, fmt.Errorf("remote usage: %w", err)
	}
	return out, nil
}

// answerUsage is the lab socket's answer to a usage request.
func answerUsage(u map[string]RemoteUsage) labResponse {
	body, err := json.Marshal(u)
	if err != nil {
		return labResponse{Error: fmt.Sprintf("encode usage: %v", err)}
	}
	return labResponse{OK: true, Result: body}
}
