package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/machine"
	"github.com/simjecture/simjecture/store"
)

// Capabilities and placement: an experiment with a capability goes only to
// a machine of the pool whose manifest hash for it is the one frozen with
// the study (contract section 13). This host's hashes are read from the
// study's capabilities folder when the pool opens (the run itself checks
// them again); a worker's are what its daemon reported at connect.

// capabilityReporter is a machine that reports the capability manifests it
// can run; ok is false until it has been reached once. A machine that is
// not one has none.
type capabilityReporter interface {
	CapabilityHashes() (hashes map[string]string, ok bool)
}

// localSlot is this host's slot, with its capability hashes.
func localSlot(k Contract, cores int, memMB int64) *slot {
	s := &slot{id: machine.LocalID, cpus: cores, memMB: memMB, capsKnown: true}
	if k.Capabilities != "" && len(k.CapabilityHashes) > 0 {
		_, s.caps, _ = LoadCapabilities(k.Capabilities) // unreadable: none here, and the refusal says so
	}
	return s
}

// capabilities is what the slot can run: its hashes, and whether they are known yet.
func (s *slot) capabilities() (map[string]string, bool) {
	if s.m == nil {
		return s.caps, s.capsKnown
	}
	if c, ok := s.m.(capabilityReporter); ok {
		return c.CapabilityHashes()
	}
	return nil, true
}

// hasCapability reports whether r may run on s: no capability, or the
// slot's manifest hash for it is the frozen one.
func (s *slot) hasCapability(k Contract, r Receipt) bool {
	if r.Capability == "" {
		return true
	}
	caps, _ := s.capabilities()
	want, frozen := k.CapabilityHashes[r.Capability]
	return frozen && caps[r.Capability] == want
}

// capabilityFit says whether admission may place r on s (ok), or must wait
// for s's first report of its capabilities (wait): a worker not reached yet
// may have r's capability, so placement does not pass it over for the next
// machine; one that cannot be reached is passed over.
func (s *slot) capabilityFit(ctx context.Context, k Contract, r Receipt) (ok, wait bool) {
	if s.hasCapability(k, r) {
		return true, false
	}
	if _, known := s.capabilities(); known {
		return false, false
	}
	reach := s.reachable(ctx)
	return false, reach == nil || errors.Is(reach, machine.ErrConnecting)
}

// capabilityRefusal is why no machine of the pool can ever run r's
// capability, or nil while one can (or a worker has not reported yet).
func (e *executor) capabilityRefusal(r Receipt) error {
	if r.Capability == "" {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var why []string
	for _, s := range e.slots() {
		caps, known := s.capabilities()
		if !known || s.hasCapability(e.k, r) {
			return nil
		}
		switch _, has := caps[r.Capability]; {
		case s.m == nil && has:
			why = append(why, s.id+": its runtime or manifest changed since the study was created")
		case s.m == nil:
			why = append(why, s.id+": not in the study's capabilities folder")
		case has:
			why = append(why, s.id+": its manifest hash differs from the study's")
		default:
			why = append(why, s.id+": not installed on the worker")
		}
	}
	return fmt.Errorf("capability %s: no machine of the pool has it as frozen with the study (%s); it refuses to run",
		r.Capability, strings.Join(why, "; "))
}

// refuse records the queued r failed with why: no machine can run it.
func (e *executor) refuse(ctx context.Context, r Receipt, why error) {
	err := e.s.Tx(ctx, func(tx *store.Tx) error {
		cur, err := getReceipt(tx, r.ID)
		if err != nil || cur.Status != ExpQueued {
			return err
		}
		final := finishReceipt(cur, sandbox.Result{}, why)
		if _, err := putReceipt(tx, final); err != nil {
			return err
		}
		return appendEvent(tx, ExperimentFinishedPayload{Experiment: final.ID, Status: final.Status})
	})
	if err != nil {
		e.report(ctx, "refuse a capability experiment no machine can run", err)
		return
	}
	e.notify()
}
