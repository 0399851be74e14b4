package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/machine"
)

func savedWorker(t *testing.T, id string, port int) machine.Profile {
	t.Helper()
	p := machine.Profile{ID: id, Kind: machine.KindSSH, Host: "w.example", Port: port, Root: "/srv/sj",
		ExecutionBackend: sandbox.Bubblewrap, CPUs: 2, MemoryMB: 1024, MaxJobs: 1}
	dir, err := machine.ConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := machine.NewRegistry(dir).Save(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPoolFreezing: the pool records each worker's identity; a resume that
// names another pool, or finds a worker's identity changed, is refused
// naming it; credentials may change.
func TestPoolFreezing(t *testing.T) {
	t.Setenv(machine.EnvConfig, t.TempDir())
	savedWorker(t, "w1", 22)
	if _, err := freezePool([]string{"w1", "nosuch"}); !errors.Is(err, machine.ErrNotFound) {
		t.Fatalf("freezing an unknown worker = %v", err)
	}
	if _, err := freezePool([]string{"w1", "w1"}); err == nil {
		t.Fatal("a worker given twice was frozen")
	}
	if pool, err := freezePool([]string{"local"}); err != nil || pool != nil {
		t.Fatalf("local alone = %v, %v; want no pool recorded", pool, err)
	}
	pool, err := freezePool([]string{"w1", "local"})
	if err != nil || len(pool) != 2 {
		t.Fatalf("freezePool = %v, %v", pool, err)
	}
	k := Contract{Workers: pool}
	if err := CheckFrozenWorkers(k, nil); err != nil {
		t.Fatalf("an unchanged pool: %v", err)
	}
	if err := CheckFrozenWorkers(k, []string{"w1"}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "workers are immutable") {
		t.Errorf("another pool = %v", err)
	}
	p := savedWorker(t, "w1", 22)
	p.KnownHosts = "/etc/kh"
	dir, _ := machine.ConfigDir()
	if err := machine.NewRegistry(dir).Save(p); err != nil {
		t.Fatal(err)
	}
	if err := CheckFrozenWorkers(k, nil); err != nil {
		t.Errorf("renewed credentials refused: %v", err)
	}
	savedWorker(t, "w1", 2222)
	if err := CheckFrozenWorkers(k, nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "worker w1") {
		t.Errorf("a changed identity = %v, want a refusal naming w1", err)
	}
}

// fakeMachine is a worker whose reachability a test sets.
type fakeMachine struct {
	id    string
	reach error
}

func (f *fakeMachine) ID() string                      { return f.id }
func (f *fakeMachine) Reachable(context.Context) error { return f.reach }
func (f *fakeMachine) Close() error                    { return nil }
func (f *fakeMachine) Run(context.Context, string, sandbox.Spec) (sandbox.Result, machine.Remote, error) {
	return sandbox.Result{}, machine.Remote{}, fmt.Errorf("not run in this test")
}

// TestAdmissionPlacement: an experiment goes to the first machine of the
// pool with room that can be reached; an unreachable one is never chosen;
// one still connecting holds placement until it answers.
func TestAdmissionPlacement(t *testing.T) {
	t.Parallel()
	w := &fakeMachine{id: "w1"}
	cases := []struct {
		name      string
		reach     error
		localUsed int
		cap       string
		want      string // "" means not admitted
	}{
		{"first reachable", nil, 0, "", "w1"},
		{"unreachable skipped", fmt.Errorf("down: %w", machine.ErrUnreachable), 0, "", "local"},
		{"connecting waits", fmt.Errorf("w1: %w", machine.ErrConnecting), 0, "", ""},
		{"capability stays local", nil, 0, "solver", "local"},
		{"all full", fmt.Errorf("down: %w", machine.ErrUnreachable), 4, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w.reach = tc.reach
			remote := &slot{id: "w1", m: w, cpus: 2, memMB: 1024, maxJobs: 1}
			local := &slot{id: "local", cpus: 4, used: Resources{CPUs: tc.localUsed}, caps: map[string]string{"solver": "h1"}, capsKnown: true}
			e := &executor{pool: []*slot{remote, local}, running: map[string]*runningExp{},
				k: Contract{CapabilityHashes: map[string]string{"solver": "h1"}}}
			r := Receipt{ID: "exp_1", Capability: tc.cap, Resources: Resources{CPUs: 1, MemoryMB: 512}}
			got := ""
			if e.admit(context.Background(), r) {
				got = e.running[r.ID].slot.id
			}
			if got != tc.want {
				t.Errorf("admitted to %q, want %q", got, tc.want)
			}
		})
	}
}

// capMachine is a worker that reports capability hashes (known once reached).
type capMachine struct {
	fakeMachine
	caps  map[string]string
	known bool
}

func (c *capMachine) CapabilityHashes() (map[string]string, bool) { return c.caps, c.known }

// TestCapabilityPlacement: an experiment with a capability goes only to a
// machine whose manifest hash for it is the frozen one; when none of the
// pool has it (and every worker has reported), it is refused with each
// machine's reason; a worker that has not reported yet keeps it waiting.
func TestCapabilityPlacement(t *testing.T) {
	t.Parallel()
	frozen := Contract{CapabilityHashes: map[string]string{"solver": "h1"}}
	cases := []struct {
		name    string
		worker  map[string]string
		known   bool
		local   map[string]string
		want    string // the slot admitted to; "" none
		refusal []string
	}{
		{"worker with the same hash", map[string]string{"solver": "h1"}, true, nil, "w1", nil},
		{"worker reports none: local", map[string]string{}, true, map[string]string{"solver": "h1"}, "local", nil},
		{"worker with another hash: local", map[string]string{"solver": "h2"}, true, map[string]string{"solver": "h1"}, "local", nil},
		{"nowhere", map[string]string{}, true, map[string]string{"solver": "h9"},
			"", []string{"capability solver", "local: its runtime or manifest changed since the study was created", "w1: not installed on the worker"}},
		{"other hash on the worker, none here", map[string]string{"solver": "h2"}, true, nil,
			"", []string{"local: not in the study's capabilities folder", "w1: its manifest hash differs"}},
		{"worker not reported yet waits", nil, false, nil, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &capMachine{fakeMachine: fakeMachine{id: "w1"}, caps: tc.worker, known: tc.known}
			remote := &slot{id: "w1", m: w, cpus: 2, memMB: 1024}
			local := &slot{id: "local", cpus: 4, caps: tc.local, capsKnown: true}
			e := &executor{k: frozen, pool: []*slot{remote, local}, running: map[string]*runningExp{}}
			r := Receipt{ID: "exp_1", Capability: "solver", Resources: Resources{CPUs: 1, MemoryMB: 512}}
			why := e.capabilityRefusal(r)
			for _, want := range tc.refusal {
				if why == nil || !strings.Contains(why.Error(), want) {
					t.Errorf("refusal = %v, want it to contain %q", why, want)
				}
			}
			if len(tc.refusal) == 0 && why != nil {
				t.Errorf("refused: %v", why)
			}
			got := ""
			if e.admit(context.Background(), r) {
				got = e.running[r.ID].slot.id
			}
			if got != tc.want {
				t.Errorf("admitted to %q, want %q", got, tc.want)
			}
		})
	}
}

func TestJobIDIsStablePerStudy(t *testing.T) {
	t.Parallel()
	a, b := jobID("study_a", "exp_1"), jobID("study_b", "exp_1")
	if a == b || a != jobID("study_a", "exp_1") || !strings.HasPrefix(a, "job_") || len(a) != 44 {
		t.Errorf("job ids %q %q", a, b)
	}
}

// TestCapabilityPlacementWaitsForFirstReport: a worker ahead of this host
// in the pool that has not reported its capabilities yet is not passed
// over while it connects (its report decides), but is once it cannot be
// reached.
func TestCapabilityPlacementWaitsForFirstReport(t *testing.T) {
	t.Parallel()
	frozen := Contract{CapabilityHashes: map[string]string{"solver": "h1"}}
	cases := []struct {
		name  string
		reach error
		want  string
	}{
		{"connecting: waits", fmt.Errorf("w1: %w", machine.ErrConnecting), ""},
		{"unreachable: this host", fmt.Errorf("w1: %w", machine.ErrUnreachable), "local"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &capMachine{fakeMachine: fakeMachine{id: "w1", reach: tc.reach}}
			remote := &slot{id: "w1", m: w, cpus: 2, memMB: 1024}
			local := &slot{id: "local", cpus: 4, caps: map[string]string{"solver": "h1"}, capsKnown: true}
			e := &executor{k: frozen, pool: []*slot{remote, local}, running: map[string]*runningExp{}}
			r := Receipt{ID: "exp_1", Capability: "solver", Resources: Resources{CPUs: 1, MemoryMB: 512}}
			got := ""
			if e.admit(context.Background(), r) {
				got = e.running[r.ID].slot.id
			}
			if got != tc.want {
				t.Errorf("admitted to %q, want %q", got, tc.want)
			}
		})
	}
}
