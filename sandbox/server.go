package sandbox

import (
	"math"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitResult is a target's exit status as the reaper collected it.
type waitResult struct {
	ws syscall.WaitStatus
	ru syscall.Rusage
}

// procKey names one process: a pid and its start time.
type procKey struct {
	pid   int
	start uint64
}

// server is the state the runs of one runner share: the central reaper, the
// targets it dispatches exit statuses to, and the owners of orphans (the
// runner is their subreaper). One-shot mode uses it with a single run.
type server struct {
	parentPID int
	self      int
	gone      chan struct{} // closed when the parent died or stdin closed
	cgroups   cgroupSetup
	spareCg   cgroupSpare              // the next run's cgroup, made ahead (cgspare.go)
	kidsFile  func() (int, error)      // our main thread's children file, opened once
	devNull   func() (*os.File, error) // /dev/null, every target's stdin, opened once
	chld      *chldRelay               // SIGCHLD to the reaper when needed (nil: one-shot mode, which always has it)
	stopOnce  sync.Once

	mu      sync.Mutex
	targets map[int]*watchdog           // live targets by pid
	active  map[uint64]*watchdog        // runs not yet finished, by id
	orphans map[procKey]map[uint64]bool // runs that may own an orphan, fixed when first seen
	gate    *gateProc                   // the spare start gate, or nil (gate.go)
	gateOff bool                        // no gates: one-shot mode, or one could not be started
	gateSeq uint64                      // names the gates' cgroups
}

func newServer(parentPID int) *server {
	self := os.Getpid()
	kids := "/proc/" + strconv.Itoa(self) + "/task/" + strconv.Itoa(self) + "/children"
	return &server{parentPID: parentPID, self: self, gone: make(chan struct{}), cgroups: probeCgroups(),
		targets: map[int]*watchdog{}, active: map[uint64]*watchdog{}, orphans: map[procKey]map[uint64]bool{},
		kidsFile: sync.OnceValues(func() (int, error) { return unix.Open(kids, unix.O_RDONLY|unix.O_CLOEXEC, 0) }),
		devNull:  sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })}
}

// stop tells every run that the parent is gone: they kill their trees.
func (s *server) stop() { s.stopOnce.Do(func() { close(s.gone) }) }

func (s *server) parentAlive() bool { return os.Getppid() == s.parentPID }

// begin registers a run as active before its target starts.
func (s *server) begin(w *watchdog) {
	s.mu.Lock()
	s.active[w.id] = w
	s.mu.Unlock()
}

// end unregisters a finished run.
func (s *server) end(w *watchdog) {
	s.mu.Lock()
	delete(s.active, w.id)
	s.mu.Unlock()
}

// forkTarget runs fork under the reaper's lock and registers the new pid, so
// that the reaper cannot collect the target before it is known.
func (s *server) forkTarget(w *watchdog, fork func() (int, error)) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := fork()
	if err != nil {
		return pid, err
	}
	s.targets[pid] = w
	w.inheritedRSS = selfMaxRSS()
	if st, err := readStat(pid); err == nil {
		w.startTicks = st.start // read by ownersOf, under s.mu
	}
	return pid, nil
}

// reap collects every exited child. A target's status goes to its watchdog;
// orphans reparented to us are reaped, and the largest resident set one of
// them (or its own reaped descendants) reached counts for the run whose tag
// it carries, while that run is active: a bwrap sandbox's init, for one,
// reaps the experiment and is itself reaped here, since the bwrap launcher
// exits without waiting for it. Its namespaces' teardown takes 0.2–0.9 ms
// more, and a run does not wait for it (that would add as much to every
// Bubblewrap launch), so a peak between samples of a run that short may be
// missed.
func (s *server) reap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		pid, err := exitedChild()
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		w, target := s.targets[pid]
		if !target {
			w = s.taggedRun(pid) // read before the wait: a reaped pid has no limits
		}
		var r waitResult
		if got, err := syscall.Wait4(pid, &r.ws, syscall.WNOHANG, &r.ru); err != nil || got != pid {
			continue // EINTR: it is still there for the next round
		}
		s.gateEnded(pid)
		if target {
			delete(s.targets, pid)
			w.exit <- r // buffered: one status per target
			continue
		}
		if w != nil {
			w.orphanRSS = max(w.orphanRSS, r.ru.Maxrss*1024)
		}
		for _, w := range s.active {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// taggedRun is the active run whose tag pid carries, or nil.
func (s *server) taggedRun(pid int) *watchdog {
	if tag := runTag(pid); tag>>tagIDBits == uint64(s.self) {
		return s.active[tag&tagIDMask]
	}
	return nil
}

// orphanPeak is the largest resident set of w's reaped orphans, in bytes.
func (s *server) orphanPeak(w *watchdog) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return w.orphanRSS
}

// forget drops a target whose status was collected outside the reaper.
func (s *server) forget(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.targets, pid)
}

// selfMaxRSS is this process's largest resident set so far, in bytes: no
// less than what a child forked before the call inherited (see
// watchdog.inheritedRSS).
func selfMaxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.MaxInt64 // unknown: the kernel's maxrss of the target is then not used
	}
	return ru.Maxrss * 1024
}
