package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/simjecture/simjecture/store"
)

// View reads a study for display: in the supervisor's process (woken by its
// bus) or in another process (polling the store).
type View struct {
	c    Campaign
	s    *store.Store
	bus  *Bus
	owns bool
}

// OpenView opens a study read-mostly, for status, watch and attach. A
// continuation phase whose frozen snapshot changed is refused.
func OpenView(ctx context.Context, c Campaign) (*View, error) {
	s, err := c.Open(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkSnapshotOnOpen(ctx, c, s); err != nil {
		_ = s.Close()
		return nil, err
	}
	return &View{c: c, s: s, owns: true}, nil
}

// checkSnapshotOnOpen verifies a continuation's snapshot when the study's
// contract is recorded (a study being created has none yet).
func checkSnapshotOnOpen(ctx context.Context, c Campaign, s *store.Store) error {
	k, err := LoadContract(ctx, s)
	if err != nil {
		return nil // the views report a missing contract in their own words
	}
	return VerifyContinuation(c, k)
}

// View returns a view of the supervised study that shares its store and bus.
func (sv *Supervisor) View() *View { return &View{c: sv.c, s: sv.s, bus: sv.Bus} }

// Campaign is the study folder.
func (v *View) Campaign() Campaign { return v.c }

// Close closes the store if the view opened it.
func (v *View) Close() error {
	if v.owns {
		return v.s.Close()
	}
	return nil
}

// Snapshot reads the whole study (status --json).
func (v *View) Snapshot(ctx context.Context) (Snapshot, error) { return LoadSnapshot(ctx, v.c, v.s) }

// DisplaySnapshot reads the study for display: every claim and review, the
// newest ViewExperiments experiments with the counts of all, and no notes.
func (v *View) DisplaySnapshot(ctx context.Context) (Snapshot, error) {
	return loadSnapshot(ctx, v.c, v.s, ViewExperiments)
}

// RecentSnapshot reads the study as DisplaySnapshot does, with only the
// newest n experiments (text status).
func (v *View) RecentSnapshot(ctx context.Context, n int) (Snapshot, error) {
	return loadSnapshot(ctx, v.c, v.s, max(n, 0))
}

// LastSeq is the newest event number.
func (v *View) LastSeq(ctx context.Context) (int64, error) { return v.s.LastSeq(ctx) }

// Follow calls fn for each event after `after` until ctx ends or fn fails.
func (v *View) Follow(ctx context.Context, after int64, fn func(Event) error) error {
	var wake <-chan struct{}
	poll := 200 * time.Millisecond
	if v.bus != nil {
		ch, unsub := v.bus.Subscribe()
		defer unsub()
		wake, poll = ch, time.Second
	}
	return Follow(ctx, v.s, after, wake, poll, fn)
}

// SupervisorPID is the pid of the live supervisor of the study, or 0.
func (v *View) SupervisorPID(ctx context.Context) (int, error) {
	if !Owned(v.c) {
		return 0, nil
	}
	var st SupervisorState
	err := v.s.Read(ctx, func(tx *store.Tx) (err error) { st, err = getState(tx); return err })
	if err != nil {
		return 0, fmt.Errorf("read supervisor state: %w", err)
	}
	return st.PID, nil
}
