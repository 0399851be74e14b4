package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// rtTagBase marks a run's processes: the target gets RLIMIT_RTTIME (soft
// and hard) rtTagBase + its run's tag, which every descendant inherits, even
// one that calls setsid. The limit only concerns realtime-scheduled tasks,
// and 2^40 µs of realtime CPU without a blocking call is never reached.
const rtTagBase = 1 << 40

// A run's tag is its runner's pid above tagIDBits and its run id below
// (pids stay below 2^22, so a tag stays below 2^46): the host can find the
// processes of a runner that died.
const (
	tagIDBits = 24
	tagIDMask = 1<<tagIDBits - 1
)

// tag is the run tag of w's processes.
func (w *watchdog) tag() uint64 { return uint64(w.srv.self)<<tagIDBits | w.id&tagIDMask }

// tagMax bounds the tags: a runner's pid and a run id (see tagIDBits).
const tagMax = 1 << (22 + tagIDBits)

// runTag returns the run tag pid carries, or 0. A run's processes carry it
// as their soft and hard limit; the processes a runner forked and has not
// limited yet carry its birth tag (see tagForks) as their soft limit only.
func runTag(pid int) uint64 {
	var r unix.Rlimit
	if unix.Prlimit(pid, unix.RLIMIT_RTTIME, nil, &r) != nil || r.Cur <= rtTagBase || r.Cur-rtTagBase >= tagMax {
		return 0
	}
	return r.Cur - rtTagBase
}

// tagForks gives the runner the birth tag: its own pid and run id 0 (no
// run), as its soft RLIMIT_RTTIME, which every process it forks inherits.
// So a target is tagged from its first instruction, before setLimits gives
// it its run's tag, and so is what it forks before that: bwrap clones its
// sandbox child at once and holds it in eventfd_read until the launcher
// writes the eventfd, forever if the launcher is killed first (by its
// parent-death signal, when the runner dies). The host's killTagged finds
// that child by the tag. The hard limit is kept, so that setLimits can
// still raise the soft limit to the run's tag without privilege.
func tagForks(runner int) error {
	var r unix.Rlimit
	if err := unix.Prlimit(0, unix.RLIMIT_RTTIME, nil, &r); err != nil {
		return fmt.Errorf("rttime: %w", err)
	}
	r.Cur = min(rtTagBase+uint64(runner)<<tagIDBits, r.Max)
	if err := unix.Prlimit(0, unix.RLIMIT_RTTIME, &r, nil); err != nil {
		return fmt.Errorf("rttime: %w", err)
	}
	return nil
}

// killTagged SIGKILLs, until none is left (or about a second has passed),
// every process tagged by a run of the runner with pid runner: the host
// calls it when its runner died, which would otherwise leave PRoot's
// tracees and the descendants of a cooperative run that left its session.
// Only processes of our own account can be read, and so killed.
func killTagged(runner int) {
	for range 100 {
		if killTaggedOnce(runner) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func killTaggedOnce(runner int) int {
	names, err := readDirNames("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == os.Getpid() {
			continue
		}
		tag := runTag(pid)
		st, err := readStat(pid)
		if tag == 0 || tag>>tagIDBits != uint64(runner) || err != nil || st.finished() {
			continue
		}
		n++
		signalIfSame(pid, st.start, syscall.SIGKILL)
	}
	return n
}

// orphansOf returns our children (orphans, not targets) that belong to w
// (see claims). Orphans are the runner's children because it is their
// subreaper; a run's watchdog finds them here, not below its target.
func (s *server) orphansOf(w *watchdog) []int {
	kids := s.leaderChildren()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	live := map[procKey]bool{}
	for _, c := range kids {
		st, err := readStat(c)
		if _, isTarget := s.targets[c]; err != nil || isTarget || s.gate != nil && c == s.gate.pid {
			continue
		}
		key := procKey{c, st.start}
		live[key] = true
		if s.claims(w, c, st, s.ownersOf(key)) {
			out = append(out, c)
		}
	}
	for k := range s.orphans {
		if !live[k] {
			delete(s.orphans, k)
		}
	}
	return out
}

// ownersOf returns the runs that may own orphan k: those active when it was
// first seen that had started by the time it did. s.mu is held.
func (s *server) ownersOf(k procKey) map[uint64]bool {
	if owners, ok := s.orphans[k]; ok {
		return owners
	}
	owners := map[uint64]bool{}
	for id, w := range s.active {
		if w.startTicks <= k.start {
			owners[id] = true
		}
	}
	s.orphans[k] = owners
	return owners
}

// claims decides whether orphan pid belongs to w. In order: the session of
// another live target belongs to that run; the run tag names the run, if
// it is active; a process or session leader w recorded, or w's target's
// session, is w's; an orphan no run can name is w's once no other run that
// may own it is active. So a run never kills another run's processes; an
// orphan nobody can name waits for the last run that may own it.
func (s *server) claims(w *watchdog, pid int, st procStat, owners map[uint64]bool) bool {
	if o, ok := s.targets[st.sid]; ok && o != w {
		return false
	}
	if o := s.taggedRun(pid); o != nil {
		return o == w
	}
	if w.owns(pid, st) {
		return true
	}
	for o := range owners {
		if o != w.id && s.active[o] != nil {
			return false
		}
	}
	return true
}

// owns reports whether orphan pid is one w recorded, is in its target's
// session, or is in the session of a process w recorded (whose leader is
// still that process, or gone).
func (w *watchdog) owns(pid int, st procStat) bool {
	if start, ok := w.seen[pid]; ok && start == st.start {
		return true
	}
	if w.target > 0 && st.sid == w.target {
		return true
	}
	start, ok := w.seen[st.sid]
	if !ok {
		return false
	}
	lead, err := readStat(st.sid)
	return err != nil || lead.start == start
}

// leaderChildren lists the children of our main thread. The kernel gives an
// orphan to the first live thread of its subreaper (find_new_reaper, then
// find_alive_thread), which is the main thread: it lives as long as the
// process. (A target is the child of whichever thread started it; targets
// are known by pid.) The main thread's children file stays open: procfs
// regenerates it when read from offset 0, so a scan costs one pread instead
// of listing every thread of the runner and reading each one's file.
func (s *server) leaderChildren() []int {
	fd, err := s.kidsFile()
	if err != nil {
		return children(s.self, nil)
	}
	var buf [4096]byte
	n, err := unix.Pread(fd, buf[:], 0)
	if err != nil || n == len(buf) {
		return children(s.self, nil)
	}
	return appendPids(buf[:n], nil)
}
