package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The start gate: a run starts in a process the runner forked ahead of it
// (into the cgroup the run will have, where runs have cgroups). That
// process runs a program of 371 bytes of our own (gate/gate_amd64.S),
// which waits on a private socket for the run's request, sets its own
// rlimits, changes to the work folder, opens the logs onto fds 1 and 2 and
// executes the launcher (bwrap, proot or the program): the limits are in
// place before the launcher's first instruction, and the fork and the
// limits' handshake (bwrap's --block-fd, bwrapgate.go; the stop after the
// exec, tracegate.go) are off the run's critical path. The program is a
// sealed memfd, executed through /proc/self/fd; where that is not allowed,
// on other architectures, with cgroups lacking cgroup.kill, or for a
// request too long for the gate's buffer, the handshakes are used as
// before.
//
// The runner keeps one spare gate and forks the next once a run's report
// is out (a run that finds none forks its own).
// A spare is a child of the runner that belongs to no run: the orphan scans
// skip it, the exit sweep kills it, and its socket's end (the runner's)
// ends it when the runner dies. Only the runner holds the other end of its
// socket, and a socket cannot be opened again through /proc/PID/fd.

// forceNoGate makes every run take the ptrace stop instead (tests and
// benchmarks, to compare the two).
var forceNoGate bool

// gateArgv0 is a spare gate's command line (its comm is the memfd's fd).
const gateArgv0 = "simjecture-gate"

// gateBuf is the gate's request buffer (BUFSZ in the source).
const gateBuf = 1 << 16

// gateProc is a spare gate: its pid, pidfd, the runner's end of its
// socket, and the cgroup it was forked into where runs have cgroups (it
// becomes the run's).
type gateProc struct {
	pid, pidfd, conn int
	cg               *cgroup
}

// close lets go of the gate's descriptors and, with its cgroup, removes
// that (the gate ended or is killed here).
func (g *gateProc) close(withCgroup bool) {
	_ = unix.Close(g.pidfd)
	_ = unix.Close(g.conn)
	if withCgroup {
		g.cg.remove()
	}
}

// Steps of the gate, as it reports a failure (low half of its 8 bytes).
const (
	gateStepRead   = 1
	gateStepLimit  = 2
	gateStepChdir  = 3
	gateStepStdout = 4
	gateStepStderr = 5
	gateStepExec   = 6
)

// gateImage is gateCode as a static ELF executable: one read-only,
// executable segment at 0x400000 and a non-executable stack.
func gateImage(code []byte) []byte {
	const base, ehdr, phdr = 0x400000, 64, 56
	le := binary.LittleEndian
	img := make([]byte, ehdr+2*phdr, ehdr+2*phdr+len(code))
	copy(img, "\x7fELF\x02\x01\x01")
	le.PutUint16(img[16:], 2)    // ET_EXEC
	le.PutUint16(img[18:], 0x3e) // EM_X86_64
	le.PutUint32(img[20:], 1)
	le.PutUint64(img[24:], base+ehdr+2*phdr) // entry: the code
	le.PutUint64(img[32:], ehdr)             // program headers
	le.PutUint16(img[52:], ehdr)
	le.PutUint16(img[54:], phdr)
	le.PutUint16(img[56:], 2)
	load := img[ehdr:]
	le.PutUint32(load[0:], 1) // PT_LOAD
	le.PutUint32(load[4:], 5) // R+X
	le.PutUint64(load[16:], base)
	le.PutUint64(load[24:], base)
	le.PutUint64(load[32:], uint64(ehdr+2*phdr+len(code)))
	le.PutUint64(load[40:], uint64(ehdr+2*phdr+len(code)))
	le.PutUint64(load[48:], 0x1000)
	stack := img[ehdr+phdr:]
	le.PutUint32(stack[0:], 0x6474e551) // PT_GNU_STACK
	le.PutUint32(stack[4:], 6)          // R+W
	return append(img, code...)
}

// gateStackMin is the smallest RLIMIT_STACK the gate starts under: it
// reads its request (up to gateBuf bytes) onto its stack.
const gateStackMin = 1 << 20

// gateFile is the gate program in a sealed memfd, made once per runner.
var gateFile = sync.OnceValues(func() (int, error) {
	if len(gateCode) == 0 {
		return -1, fmt.Errorf("no start gate for this architecture")
	}
	var stack unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &stack); err != nil || stack.Cur < gateStackMin {
		return -1, fmt.Errorf("gate: RLIMIT_STACK %d below %d", stack.Cur, gateStackMin)
	}
	fd, err := unix.MemfdCreate("simjecture-gate", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if err == unix.EINVAL { // before Linux 6.3, which has no MFD_EXEC
		fd, err = unix.MemfdCreate("simjecture-gate", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return -1, fmt.Errorf("gate: memfd: %w", err)
	}
	img := gateImage(gateCode)
	if n, err := unix.Write(fd, img); err != nil || n != len(img) {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("gate: write: %d bytes, %v", n, err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("gate: seal: %w", err)
	}
	return fd, nil
})

// spawnGate forks a new gate. The caller holds s.mu, so that the reaper
// knows it (s.gate) before it can end.
func (s *server) spawnGate() (*gateProc, error) {
	img, err := gateFile()
	if err != nil {
		return nil, err
	}
	null, err := s.devNull()
	if err != nil {
		return nil, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("gate: socketpair: %w", err)
	}
	n := null.Fd()
	g := &gateProc{pidfd: -1, conn: pair[0]}
	sys := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, PidFD: &g.pidfd}
	if s.cgroups.v2Dir != "" {
		// The run that takes the gate takes its cgroup: the gate starts
		// there (CLONE_INTO_CGROUP), as a target does in its run's.
		s.gateSeq++
		g.cg = makeCgroup(filepath.Join(s.cgroups.v2Dir, runCgroups+strconv.Itoa(s.self)+"-g"+strconv.FormatUint(s.gateSeq, 10)))
		if g.cg == nil || !g.cg.canKill {
			g.cg.remove()
			_ = unix.Close(pair[0])
			_ = unix.Close(pair[1])
			return nil, fmt.Errorf("gate: no cgroup with cgroup.kill to start it in")
		}
		g.cg.attach(sys)
	}
	attr := &syscall.ProcAttr{Env: []string{}, Files: []uintptr{n, n, n, uintptr(pair[1])}, Sys: sys}
	g.pid, err = syscall.ForkExec(fmt.Sprintf("/proc/self/fd/%d", img), []string{gateArgv0}, attr)
	_ = unix.Close(pair[1])
	if err != nil {
		_ = unix.Close(pair[0])
		g.cg.remove()
		return nil, fmt.Errorf("gate: start: %w", err)
	}
	if g.pidfd < 0 { // no pidfd to watch its end by: not used
		_ = syscall.Kill(g.pid, syscall.SIGKILL)
		_ = unix.Close(pair[0])
		g.cg.remove()
		return nil, fmt.Errorf("gate: no pidfd")
	}
	return g, nil
}

// refillGate starts the spare gate if there is none.
func (s *server) refillGate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate == nil {
		s.gate = s.newGate()
	}
}

// newGate forks a gate, or returns nil. Gates stay off for the runner's
// life once one could not be started for a lasting reason; a fork refused
// for want of processes or memory (a run's fork bomb at its limit) is
// tried again for the next run. s.mu is held.
func (s *server) newGate() *gateProc {
	if s.gateOff || s.stopping() {
		return nil
	}
	g, err := s.spawnGate()
	if err != nil {
		s.gateOff = !transientGateError(err)
		return nil
	}
	return g
}

// transientGateError reports whether a gate could not start for a reason
// that passes: too many processes or descriptors, or too little memory.
func transientGateError(err error) bool {
	for _, e := range []error{unix.EAGAIN, unix.ENOMEM, unix.EMFILE, unix.ENFILE, unix.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// gateEnded forgets the spare gate if it is pid, which the reaper just
// collected (someone killed it): so that the pid, free again, is never
// taken for the spare. s.mu is held.
func (s *server) gateEnded(pid int) {
	if g := s.gate; g != nil && g.pid == pid {
		g.close(true)
		s.gate = nil
	}
}

// stopping reports whether the runner was told to stop.
func (s *server) stopping() bool {
	select {
	case <-s.gone:
		return true
	default:
		return false
	}
}

// takeGate hands the spare gate to w as its target (registered, as
// forkTarget registers a fork), forking one now when there is none
// (another run took it, it ended, or the refill after the last run has
// not come yet). It returns nil when gates are off or none could start.
func (s *server) takeGate(w *watchdog) *gateProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gate
	s.gate = nil
	if g == nil {
		g = s.newGate()
	}
	if g != nil {
		s.targets[g.pid] = w
		w.inheritedRSS = selfMaxRSS()
		w.startTicks = bootTicks() // the run starts now, not when its gate was forked
	}
	return g
}

// dropGate undoes takeGate for a gate that did not take its request: it is
// killed, and a status the reaper already gave w is dropped. Its cgroup
// stays the run's, which starts the other way.
func (s *server) dropGate(w *watchdog, g *gateProc) {
	s.forget(g.pid)
	_ = unix.PidfdSendSignal(g.pidfd, unix.SIGKILL, nil, 0)
	g.close(false)
	select {
	case <-w.exit:
	default:
	}
}

// closeGate kills the spare gate (the runner is stopping).
func (s *server) closeGate() {
	s.mu.Lock()
	g := s.gate
	s.gate, s.gateOff = nil, true
	s.mu.Unlock()
	if g != nil {
		_ = unix.PidfdSendSignal(g.pidfd, unix.SIGKILL, nil, 0)
		g.close(true)
	}
}

// bootTicks is the time since boot in clock ticks, as /proc/PID/stat
// gives a process's start.
func bootTicks() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano()) / (1e9 / clockTicks)
}

// gateRequest encodes a run for the gate (see gate_amd64.S): the length,
// the limits, the offsets of the folder, the logs and the program, argv and
// env; then the strings. ok is false when it does not fit the gate's
// buffer, or a string holds a NUL or the folder is not named (then the
// ptrace stop's ForkExec says what is wrong).
func gateRequest(cfg *helperConfig, path string, limits []rlimitSet) ([]byte, bool) {
	if cfg.Dir == "" || strings.ContainsRune(cfg.Dir+cfg.Stdout+cfg.Stderr+path, 0) ||
		slices.ContainsFunc(cfg.Argv, hasNUL) || slices.ContainsFunc(cfg.Env, hasNUL) {
		return nil, false
	}
	words := []uint64{0, uint64(len(limits))}
	for _, l := range limits {
		words = append(words, uint64(l.res), l.soft, l.hard)
	}
	fixed := len(words)
	words = append(words, 0, 0, 0, 0, uint64(len(cfg.Argv)))
	words = append(words, make([]uint64, len(cfg.Argv)+1)...)
	words = append(words, uint64(len(cfg.Env)))
	words = append(words, make([]uint64, len(cfg.Env)+1)...)
	head := uint64(len(words) * 8)
	var data []byte
	str := func(s string) uint64 {
		off := head + uint64(len(data))
		data = append(append(data, s...), 0)
		return off
	}
	words[fixed], words[fixed+1], words[fixed+2], words[fixed+3] = str(cfg.Dir), str(cfg.Stdout), str(cfg.Stderr), str(path)
	for i, a := range cfg.Argv {
		words[fixed+5+i] = str(a)
	}
	env := fixed + 5 + len(cfg.Argv) + 2
	for i, e := range cfg.Env {
		words[env+i] = str(e)
	}
	words[0] = head + uint64(len(data))
	if words[0] > gateBuf {
		return nil, false
	}
	out := make([]byte, 0, words[0])
	for _, w := range words {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	return append(out, data...), true
}

func hasNUL(s string) bool { return strings.ContainsRune(s, 0) }

// send writes the request to the gate. A gate that ended (someone killed
// it) fails here with EPIPE, without a SIGPIPE.
func (g *gateProc) send(req []byte) error {
	for len(req) > 0 {
		n, err := unix.SendmsgN(g.conn, req, nil, nil, unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		req = req[n:]
	}
	return nil
}

// gateError reads what the gate of w's ended target reported: nothing
// (EOF: it executed the launcher) or the step that failed and its errno,
// as the error the runner reports for the same failure without a gate.
func (w *watchdog) gateError() string {
	if w.gateConn < 0 {
		return ""
	}
	defer func() {
		_ = unix.Close(w.gateConn)
		w.gateConn = -1
	}()
	var b [8]byte
	n, _, err := unix.Recvfrom(w.gateConn, b[:], unix.MSG_DONTWAIT)
	if err != nil || n != len(b) {
		return ""
	}
	step, errno := binary.LittleEndian.Uint32(b[:4]), syscall.Errno(binary.LittleEndian.Uint32(b[4:]))
	switch step {
	case gateStepLimit:
		return fmt.Sprintf("helper: prlimit: %v", errno)
	case gateStepChdir, gateStepExec:
		return (&os.PathError{Op: "fork/exec", Path: w.gatePath, Err: errno}).Error()
	case gateStepStdout:
		return "helper: " + (&os.PathError{Op: "open", Path: w.cfg.Stdout, Err: errno}).Error()
	case gateStepStderr:
		return "helper: " + (&os.PathError{Op: "open", Path: w.cfg.Stderr, Err: errno}).Error()
	default:
		return fmt.Sprintf("helper: start gate: step %d: %v", step, errno)
	}
}

// takeGateFor gives the run the spare gate, and its cgroup, when it can
// start through one; the request is encoded now (gateReq) and sent at the
// launch. Without, the run takes a cgroup as before.
func (w *watchdog) takeGateFor() {
	if !w.cfg.NoGate {
		if path, ok := lookPathEnv(w.cfg.Argv[0], w.cfg.Env, w.cfg.Dir); ok {
			req, ok := gateRequest(&w.cfg, path, limitList(w.cfg.CPULimit, w.cfg.FsizeLimit, w.cfg.ASLimit, w.tag()))
			if ok {
				w.gate = w.srv.takeGate(w)
				w.gateReq, w.gatePath = req, path
			}
		}
	}
	if w.gate != nil {
		w.cg = w.gate.cg.limit(w.cfg.Memory)
		return
	}
	w.cg = w.srv.takeCgroup(w.cfg.Memory, w.id)
}

// launchGated starts w's target through the gate takeGateFor took,
// reporting false (nothing started) when it has none or the gate is gone
// (the run then starts the other way, in the same cgroup).
func (w *watchdog) launchGated() bool {
	g := w.gate
	w.gate = nil
	if g == nil {
		return false
	}
	// A spare someone stopped (SIGSTOP) would hold the run until its
	// deadline: it is continued first.
	_ = unix.PidfdSendSignal(g.pidfd, unix.SIGCONT, nil, 0)
	err := g.send(w.gateReq)
	if err != nil {
		w.srv.dropGate(w, g)
		return false
	}
	w.target, w.pidfd, w.gateConn = g.pid, g.pidfd, g.conn
	w.rep.Launch = LaunchGate
	return true
}
