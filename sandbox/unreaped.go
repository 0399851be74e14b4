package sandbox

import (
	"os"
	"time"
)

// unreapedWait bounds how long a finished run waits for its ending orphans
// to become reapable (their exit path is short; a stuck one is not waited
// for longer).
const unreapedWait = 200 * time.Millisecond

// noteUnreaped remembers pid when it is this runner's child that has ended
// its own code but is not reaped yet: its resident-set peak (and its reaped
// children's, such as a bwrap sandbox init's experiment) only arrives with
// its reaping.
func (w *watchdog) noteUnreaped(pid int, start uint64) {
	st, err := readStat(pid)
	if err != nil || st.start != start || st.ppid != os.Getpid() {
		return
	}
	if w.unreaped == nil {
		w.unreaped = map[int]uint64{}
	}
	w.unreaped[pid] = start
}

// awaitUnreaped reaps until every orphan noteUnreaped recorded is gone, for
// at most unreapedWait, so that their peaks count for this run.
func (w *watchdog) awaitUnreaped() {
	deadline := time.Now().Add(unreapedWait)
	for {
		w.srv.reap()
		for pid, start := range w.unreaped {
			if st, err := readStat(pid); err != nil || st.start != start {
				delete(w.unreaped, pid)
			}
		}
		left := time.Until(deadline)
		if len(w.unreaped) == 0 || left <= 0 {
			return
		}
		select {
		case <-w.wake:
		case <-time.After(min(left, 5*time.Millisecond)):
		}
	}
}
