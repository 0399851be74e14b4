package sandbox

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// procStat is the part of /proc/<pid>/stat the watchdog needs.
type procStat struct {
	state    byte
	exiting  bool   // PF_EXITING: in its exit path, it never runs its own code again
	ppid     int    // parent pid
	sid      int    // session id
	cpuTicks uint64 // utime + stime
	start    uint64 // starttime, in clock ticks since boot
	threads  int    // num_threads
	rssPages int64  // resident pages
	faults   int64  // minor + major page faults, of every thread
}

var pageSize = int64(os.Getpagesize())

// clockTicks is USER_HZ; Linux reports 100 on every architecture Go supports.
const clockTicks = 100

// readStat parses /proc/<pid>/stat. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	var buf [1024]byte
	var path [32]byte
	b, err := readProc(string(strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10))+"/stat", buf[:])
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat parses the content of a /proc/<pid>/stat file.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, errors.New("malformed stat")
	}
	var st procStat
	sc := fieldScanner{b: b[i+2:]}
	// Field numbers below are man proc(5)'s minus 3: state is field 3.
	for k := 0; k < 22; k++ {
		f, ok := sc.next()
		if !ok {
			return procStat{}, errors.New("short stat")
		}
		switch k {
		case 0:
			st.state = f[0]
		case 1:
			st.ppid = int(atoi(f))
		case 3:
			st.sid = int(atoi(f))
		case 6:
			st.exiting = uint64(max(0, atoi(f)))&pfExiting != 0
		case 7, 9:
			st.faults += max(0, atoi(f))
		case 11, 12:
			st.cpuTicks += uint64(max(0, atoi(f)))
		case 17:
			st.threads = int(atoi(f))
		case 19:
			st.start = uint64(max(0, atoi(f)))
		case 21:
			st.rssPages = atoi(f)
		}
	}
	return st, nil
}

// ProcStat is what a process monitor reads from /proc/<pid>/stat.
type ProcStat struct {
	Comm     string // the command name, without its parentheses
	State    byte   // R, S, D, Z, T, …
	PPID     int
	CPUTicks uint64 // utime + stime, in clock ticks
	Start    uint64 // starttime, in clock ticks since boot
	RSSPages int64  // resident pages
}

// ParseProcStat parses the content of a /proc/<pid>/stat file with the
// parser the watchdog uses.
func ParseProcStat(b []byte) (ProcStat, error) {
	st, err := parseStat(b)
	if err != nil {
		return ProcStat{}, err
	}
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || open > closing {
		return ProcStat{}, errors.New("malformed stat")
	}
	return ProcStat{Comm: string(b[open+1 : closing]), State: st.state, PPID: st.ppid,
		CPUTicks: st.cpuTicks, Start: st.start, RSSPages: st.rssPages}, nil
}

// children returns the children of every thread of pid.
func children(pid int, buf []int) []int {
	return childrenOf(pid, 0, buf)
}

// childrenOf is children for a process known to have threads threads: a
// single-threaded one needs no listing of its task folder (the watchdog's
// hot path: one file per process instead of a folder and a file).
func childrenOf(pid, threads int, buf []int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks := []string{strconv.Itoa(pid)}
	if threads != 1 {
		var err error
		if tasks, err = readDirNames(dir); err != nil {
			return buf
		}
	}
	var cbuf [4096]byte
	for _, t := range tasks {
		b, err := readProc(dir+t+"/children", cbuf[:])
		if err == nil && len(b) == len(cbuf) {
			b, err = os.ReadFile(dir + t + "/children")
		}
		if err != nil {
			continue
		}
		buf = appendPids(b, buf)
	}
	return buf
}

func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// descendants walks the process tree below root (root excluded).
func descendants(root int) []int {
	out := children(root, nil)
	for i := 0; i < len(out); i++ {
		out = children(out[i], out)
	}
	return out
}

// pfExiting is the kernel's PF_EXITING bit in the flags field of stat.
const pfExiting = 0x4

// alive reports whether pid is running (see finished) and still is the
// process that started at start. A process in its exit path — a
// namespace's init tearing its namespaces down after bwrap returned its
// status, say — is not waited for: it runs no code of its own again, and
// the reaper collects it.
func alive(pid int, start uint64) bool {
	st, err := readStat(pid)
	return err == nil && st.start == start && !st.finished()
}

// finished reports whether the process runs no code of its own any more:
// a zombie, or in its exit path, with no other live thread. (A process
// whose main thread called pthread_exit is a zombie leader whose other
// threads still run; it is alive.)
func (st procStat) finished() bool {
	return (st.state == 'Z' || st.state == 'X' || st.exiting) && st.threads <= 1
}

// signalIfSame sends sig to pid only when it still is the process that started
// at start. A pidfd pins the identity between the check and the signal.
func signalIfSame(pid int, start uint64, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if alive(pid, start) {
			_ = syscall.Kill(pid, sig)
		}
		return
	}
	defer unix.Close(fd)
	if alive(pid, start) {
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}
