package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/simjecture/simjecture/sandbox/machine"
	"github.com/simjecture/simjecture/store"
)

// Watching the pool: when no machine of the pool can be reached, queued
// experiments wait; the executor records that once (pool_unreachable,
// naming the workers, and the supervisor state's UnreachableWorkers, which
// the snapshot and the TUI's attention line show), and once when a machine
// answers again (pool_recovered).

// poolReach is the pool's reachability now: ok when a machine can be
// reached; known false while a first connection is under way.
func (e *executor) poolReach(ctx context.Context) (ok, known bool, down []string, reason string) {
	e.mu.Lock()
	slots := slices.Clone(e.slots())
	e.mu.Unlock()
	known = true
	for _, s := range slots {
		err := s.reachable(ctx)
		switch {
		case err == nil:
			return true, true, nil, ""
		case errors.Is(err, machine.ErrConnecting):
			known = false // its first connection decides
		case reason == "":
			reason = err.Error()
		}
		down = append(down, s.id)
	}
	return false, known, down, reason
}

// watchPool records a change of the pool's reachability. It looks while
// experiments are queued, at the first tick, and while the pool is down
// (to see it recover); an idle pool is not dialled for it.
func (e *executor) watchPool(ctx context.Context, queued bool) error {
	if !queued && e.poolOK != nil && *e.poolOK {
		return nil
	}
	ok, known, down, reason := e.poolReach(ctx)
	if ok && !e.hasWorkers() {
		e.poolOK = &ok // this host alone never goes down
		return nil
	}
	if !known || (e.poolOK != nil && *e.poolOK == ok) {
		return nil
	}
	err := e.s.Tx(ctx, func(tx *store.Tx) error {
		st, err := getState(tx)
		if err != nil {
			return err
		}
		wasDown := len(st.UnreachableWorkers) > 0
		if wasDown == !ok {
			return nil // already recorded (an earlier supervisor)
		}
		st.UnreachableWorkers = down
		if err := putState(tx, st); err != nil {
			return err
		}
		if ok {
			return appendEvent(tx, PoolRecoveredPayload{Worker: e.firstReachable(ctx)})
		}
		return appendEvent(tx, PoolUnreachablePayload{Reason: reason, Workers: down})
	})
	if err != nil {
		return err
	}
	e.poolOK = &ok
	e.notify()
	return nil
}

// firstReachable is the id of the first machine of the pool that answers.
func (e *executor) firstReachable(ctx context.Context) string {
	e.mu.Lock()
	slots := slices.Clone(e.slots())
	e.mu.Unlock()
	for _, s := range slots {
		if s.reachable(ctx) == nil {
			return s.id
		}
	}
	return ""
}

// hasWorkers reports whether the pool has a machine other than this host.
func (e *executor) hasWorkers() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.ContainsFunc(e.slots(), func(s *slot) bool { return s.m != nil })
}
