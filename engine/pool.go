package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/simjecture/simjecture/sandbox/machine"
)

// The pool: the machines a study's experiments may run on, frozen at
// creation (contract section 13). Each worker is recorded with its kind
// and identity hash; a study resumed with a worker whose identity changed
// is refused, naming it.

// FrozenWorker is one machine of a study's pool as recorded.
type FrozenWorker struct {
	ID       string       `json:"id"`
	Kind     machine.Kind `json:"kind"`
	Identity string       `json:"identity_sha256"`
}

// workerRegistry is the registry of worker profiles of this account.
func workerRegistry() (machine.Registry, error) {
	dir, err := machine.ConfigDir()
	if err != nil {
		return machine.Registry{}, badField(FieldWorkers, "%w", err)
	}
	return machine.NewRegistry(dir), nil
}

// freezePool records the requested workers; only local is nil.
func freezePool(ids []string) ([]FrozenWorker, error) {
	if len(ids) == 0 || slices.Equal(ids, []string{machine.LocalID}) {
		return nil, nil
	}
	reg, err := workerRegistry()
	if err != nil {
		return nil, err
	}
	var out []FrozenWorker
	for _, id := range ids {
		if slices.ContainsFunc(out, func(w FrozenWorker) bool { return w.ID == id }) {
			return nil, badField(FieldWorkers, "%q is given twice", id)
		}
		if id == machine.LocalID {
			out = append(out, FrozenWorker{ID: id, Kind: machine.KindLocal})
			continue
		}
		p, err := reg.Load(id)
		if err != nil {
			return nil, badField(FieldWorkers, "%w", err)
		}
		out = append(out, FrozenWorker{ID: id, Kind: p.Kind, Identity: p.IdentityHash()})
	}
	return out, nil
}

// PoolIDs is the ids of a study's pool, local when none is recorded.
func PoolIDs(k Contract) []string {
	if len(k.Workers) == 0 {
		return []string{machine.LocalID}
	}
	ids := make([]string, len(k.Workers))
	for i, w := range k.Workers {
		ids[i] = w.ID
	}
	return ids
}

// checkPoolRequest refuses a resume that names another pool.
func checkPoolRequest(k Contract, requested []string) error {
	if len(requested) == 0 || slices.Equal(requested, PoolIDs(k)) {
		return nil
	}
	return fmt.Errorf("workers are immutable within a study: recorded %s, requested %s: %w",
		strings.Join(PoolIDs(k), ", "), strings.Join(requested, ", "), ErrInvalid)
}

// loadPool loads the profiles of the frozen pool and refuses a worker whose
// identity changed since the study froze it.
func loadPool(k Contract) ([]machine.Profile, error) {
	var out []machine.Profile
	reg, err := workerRegistry()
	for _, w := range k.Workers {
		if w.ID == machine.LocalID {
			out = append(out, machine.Profile{ID: machine.LocalID, Kind: machine.KindLocal})
			continue
		}
		if err != nil {
			return nil, err
		}
		p, lerr := reg.Load(w.ID)
		if lerr != nil {
			return nil, fmt.Errorf("worker %s of the study's pool: %w", w.ID, errors.Join(lerr, ErrInvalid))
		}
		if got := p.IdentityHash(); got != w.Identity {
			return nil, fmt.Errorf("worker %s is immutable within a study: its identity (kind, host, port, user, run-as, root, backend) changed since the study froze it (recorded %.12s, now %.12s): %w",
				w.ID, w.Identity, got, ErrInvalid)
		}
		out = append(out, p)
	}
	return out, nil
}

// machineSize is what one machine of a study's pool can hold at once.
type machineSize struct {
	id    string
	cpus  int
	memMB int64
}

// poolSizes is the size of each machine of k's pool (this host: cores and
// memMB). One experiment may ask only for what one of them can hold, since
// admission places it on one machine and would wait forever for a request
// none can. A pool whose profiles cannot be read yields this host alone
// (the supervisor refuses to run it anyway).
func poolSizes(k Contract, cores int, memMB int64) []machineSize {
	local := []machineSize{{machine.LocalID, cores, memMB}}
	if len(k.Workers) == 0 {
		return local
	}
	profiles, err := loadPool(k)
	if err != nil {
		return local
	}
	var out []machineSize
	for _, p := range profiles {
		if p.Kind == machine.KindLocal {
			p.CPUs, p.MemoryMB = cores, memMB
		}
		out = append(out, machineSize{p.ID, p.CPUs, p.MemoryMB})
	}
	return out
}

// slotSizes is the size of each opened machine of the pool: what
// poolSizes reads from the profiles, without reading them again.
func slotSizes(slots []*slot) []machineSize {
	out := make([]machineSize, len(slots))
	for i, s := range slots {
		out[i] = machineSize{s.id, s.cpus, s.memMB}
	}
	return out
}

// largest is the most CPUs and the most memory of sizes, each on its own.
func largest(sizes []machineSize) (int, int64) {
	cpus, mem := 0, int64(0)
	for _, m := range sizes {
		cpus, mem = max(cpus, m.cpus), max(mem, m.memMB)
	}
	return cpus, mem
}

// fitsOne reports whether one machine of sizes holds r whole.
func fitsOne(sizes []machineSize, r Resources) bool {
	for _, m := range sizes {
		if r.CPUs <= m.cpus && (m.memMB <= 0 || r.MemoryMB <= m.memMB) {
			return true
		}
	}
	return len(sizes) == 0
}

// mostMemoryWith is the most memory a machine of sizes with at least cpus
// cores has (0: none has them).
func mostMemoryWith(sizes []machineSize, cpus int) int64 {
	mem := int64(0)
	for _, m := range sizes {
		if m.cpus >= cpus {
			mem = max(mem, m.memMB)
		}
	}
	return mem
}

// slot is one machine of the pool with its admission accounting.
type slot struct {
	id       string
	m        machine.Machine // nil for this host (the executor's RunFunc)
	cpus     int
	memMB    int64
	maxJobs  int
	used     Resources
	jobs     int
	remoteOf string // the worker's host, for receipts

	caps      map[string]string // this host's capability manifest hashes (poolcaps.go)
	capsKnown bool
}

// openPool builds the executor's slots: this host from its cores and
// memory, each worker from its profile.
func openPool(k Contract, selfExe string, cores int, memMB int64) ([]*slot, error) {
	localSlot := localSlot(k, cores, memMB)
	if len(k.Workers) == 0 {
		return []*slot{localSlot}, nil
	}
	profiles, err := loadPool(k)
	if err != nil {
		return nil, err
	}
	cfg, _ := machine.ConfigDir()
	var out []*slot
	for _, p := range profiles {
		if p.Kind == machine.KindLocal {
			out = append(out, localSlot)
			continue
		}
		m, err := machine.Open(p, machine.Options{SelfExe: selfExe, ConfigDir: cfg})
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", p.ID, err)
		}
		out = append(out, &slot{id: p.ID, m: m, cpus: p.CPUs, memMB: p.MemoryMB, maxJobs: p.MaxJobs, remoteOf: p.Host})
	}
	return out, nil
}

// fits reports whether r fits the slot's free capacity.
func (s *slot) fits(r Resources) bool {
	if s.maxJobs > 0 && s.jobs >= s.maxJobs {
		return false
	}
	if s.used.CPUs+r.CPUs > s.cpus {
		return false
	}
	return s.memMB <= 0 || s.used.MemoryMB+r.MemoryMB <= s.memMB
}

// reachable is nil when a new experiment may go to the slot: never to a
// worker that cannot be reached now (machine.ErrConnecting while its
// first connection is under way).
func (s *slot) reachable(ctx context.Context) error {
	if s.m == nil {
		return nil
	}
	return s.m.Reachable(ctx)
}

// jobID is the worker's job of an experiment: unique per study, stable
// across supervisor restarts, so requests to the worker are idempotent.
func jobID(studyID, expID string) string {
	sum := sha256.Sum256([]byte(studyID + "/" + expID))
	return "job_" + hex.EncodeToString(sum[:20])
}

// closePool ends every worker session.
func closePool(slots []*slot) {
	for _, s := range slots {
		if s.m != nil {
			_ = s.m.Close()
		}
	}
}

// Remote is where a worker ran an experiment (the receipt's remote).
type Remote = machine.Remote
