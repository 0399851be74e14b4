package provider

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// An agent's process tree is found by its mark, not by its process group:
// a child that calls setsid leaves the group, and once the agent exits it is
// reparented away from it. Every process of a turn carries the mark twice:
// the environment variable MarkVar and an RLIMIT_RTTIME tag, which every
// descendant inherits, also one that clears its environment. Both are in
// place before the agent runs (see startMarked). The limit
// only concerns realtime-scheduled tasks, and 2^47 µs of realtime CPU
// without a blocking call is never reached. The sandbox tags its runs below
// 2^47 (sandbox/orphans.go), so the two never mistake each other's.
const (
	MarkVar    = "SIMJECTURE_AGENT_MARK"
	markTagBit = 1 << 47
)

var markSeq atomic.Uint64

// mark identifies the processes of one agent launch: our pid and a counter.
type mark struct {
	env []byte // "\x00SIMJECTURE_AGENT_MARK=<pid>-<n>\x00"
	tag uint64 // the RLIMIT_RTTIME value, markTagBit + pid<<24 + n
}

func newMark() mark {
	n, pid := markSeq.Add(1)&(1<<24-1), uint64(os.Getpid())
	return mark{env: fmt.Appendf(nil, "\x00%s=%d-%d\x00", MarkVar, pid, n), tag: markTagBit + pid<<24 + n}
}

// envVar is the mark as a KEY=VALUE environment entry.
func (m mark) envVar() string { return string(m.env[1 : len(m.env)-1]) }

// tagProcess gives pid the mark's rlimit tag; best effort, the environment
// variable marks it anyway.
func (m mark) tagProcess(pid int) {
	lim := unix.Rlimit{Cur: m.tag, Max: m.tag}
	_ = unix.Prlimit(pid, unix.RLIMIT_RTTIME, &lim, nil)
}

// carries reports whether pid bears the mark.
func (m mark) carries(pid int) bool {
	var r unix.Rlimit
	if unix.Prlimit(pid, unix.RLIMIT_RTTIME, nil, &r) == nil && r.Max == m.tag {
		return true
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && bytes.Contains(append([]byte{0}, env...), m.env)
}

// signal sends sig to every live process that bears the mark and returns
// how many it found. A pidfd pins each process between the check and the
// signal, so a recycled pid is never signalled.
func (m mark) signal(sig syscall.Signal) int {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self, n := os.Getpid(), 0
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		if live(pid) && m.carries(pid) {
			n++
			_ = unix.PidfdSendSignal(fd, sig, nil, 0)
		}
		_ = unix.Close(fd)
	}
	return n
}

// kill SIGKILLs the marked processes until none is alive, or treeKillWait
// has passed; it reports whether none is alive (a zombie writes nothing).
func (m mark) kill() bool {
	deadline := time.Now().Add(treeKillWait)
	for m.signal(syscall.SIGKILL) > 0 {
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

const treeKillWait = time.Second

// live reports whether pid is neither a zombie nor dead.
func live(pid int) bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i >= 0 && i+2 < len(st) && st[i+2] != 'Z' && st[i+2] != 'X'
}

// startBarrier is the script of the start barrier: /bin/sh waits for one
// byte on fd 3, then becomes the agent. The sandbox starts its targets the
// same way (sandbox/helper.go).
const startBarrier = `read _ <&3 || exit 125; exec "$@" 3<&-`

// startMarked starts cmd behind the start barrier, tags it with m and only
// then lets it run: no process of the agent exists before it bears both
// marks.
func startMarked(cmd *exec.Cmd, m mark) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	gate, release, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start barrier: %w", err)
	}
	defer release.Close()
	cmd.Args = append([]string{"/bin/sh", "-c", startBarrier, "simjecture-agent", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	cmd.ExtraFiles = []*os.File{gate}
	cmd.Env = append(cmd.Env, m.envVar())
	err = cmd.Start()
	_ = gate.Close()
	if err != nil {
		return err
	}
	m.tagProcess(cmd.Process.Pid)
	_, _ = release.Write([]byte{'\n'})
	return nil
}
