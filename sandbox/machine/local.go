package machine

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// local is this host: experiments run with sandbox.Run.
type local struct{ p Profile }

// LocalProfile is the profile of this host with the given capacity.
func LocalProfile(backend sandbox.Backend, cpus int, memoryMB int64) Profile {
	return Profile{ID: LocalID, Kind: KindLocal, ExecutionBackend: backend, CPUs: cpus, MemoryMB: memoryMB, MaxJobs: max(cpus, 1)}
}

func checkLocal(p Profile) error {
	if p.ID != LocalID {
		return fmt.Errorf("a local machine has the id %q, not %q: %w", LocalID, p.ID, ErrInvalid)
	}
	return nil
}

func openLocal(p Profile, _ Options) (Machine, error) { return &local{p: p}, nil }

func (l *local) ID() string                      { return LocalID }
func (l *local) Reachable(context.Context) error { return nil }
func (l *local) Close() error                    { return nil }
func (l *local) Run(ctx context.Context, _ string, spec sandbox.Spec) (sandbox.Result, Remote, error) {
	res, err := sandbox.Run(ctx, spec)
	return res, Remote{}, err
}

func probeLocal(ctx context.Context, p Profile, _ Options) (CheckReport, error) {
	rep := sandbox.Select(ctx, p.ExecutionBackend)
	return CheckReport{
		Worker: LocalID, Protocol: Protocol, Ready: rep.Available, Backend: rep,
		CPUs: runtime.NumCPU(), Clock: time.Now().UTC(), Reason: rep.Reason,
	}, nil
}
