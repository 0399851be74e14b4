package sandbox

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// maxCachedProcs bounds the open files one run's sampler keeps (two per
// process); past it, processes are read by path each sample.
const maxCachedProcs = 512

// procFiles keeps /proc/<pid>/stat and /proc/<pid>/task/<pid>/children open
// between samples: a procfs file re-read from offset 0 with pread reports
// fresh values, so each sample costs one pread per file instead of an open,
// a read and a close with a path walk (BenchmarkWatchdogSample). The files
// are bound to the process, not the pid: once it is gone they fail, and a
// reused pid is opened afresh.
type procFiles struct {
	open map[int]procFDs
}

// procFDs are one process's open files; rollup (its smaps_rollup) is
// opened only when a sample needs the tree's PSS (see pss.go), -1 until then.
type procFDs struct{ stat, children, rollup int }

func newProcFiles() *procFiles { return &procFiles{open: map[int]procFDs{}} }

// stat reads pid's stat through its cached file, opening it if needed.
func (p *procFiles) stat(pid int, buf []byte) (procStat, bool) {
	fds, ok := p.open[pid]
	if !ok {
		if len(p.open) >= maxCachedProcs {
			st, err := readStat(pid)
			return st, err == nil
		}
		var err error
		if fds, err = openProcFDs(pid); err != nil {
			return procStat{}, false
		}
		p.open[pid] = fds
	}
	n, err := unix.Pread(fds.stat, buf, 0)
	if err != nil || n == 0 {
		p.drop(pid)
		return procStat{}, false
	}
	st, err := parseStat(buf[:n])
	if err != nil {
		p.drop(pid)
		return procStat{}, false
	}
	return st, true
}

// children appends pid's children: from the cached file of its main thread
// for a single-threaded process, else by listing every thread.
func (p *procFiles) children(pid, threads int, out []int) []int {
	fds, ok := p.open[pid]
	if !ok || threads != 1 {
		return childrenOf(pid, threads, out)
	}
	var buf [4096]byte
	n, err := unix.Pread(fds.children, buf[:], 0)
	if err != nil || n == len(buf) {
		return childrenOf(pid, threads, out)
	}
	return appendPids(buf[:n], out)
}

func openProcFDs(pid int) (procFDs, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := unix.Open(dir+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procFDs{}, err
	}
	children, err := unix.Open(dir+"/task/"+strconv.Itoa(pid)+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Close(stat)
		return procFDs{}, err
	}
	return procFDs{stat: stat, children: children, rollup: -1}, nil
}

func (p *procFiles) drop(pid int) {
	if fds, ok := p.open[pid]; ok {
		_ = unix.Close(fds.stat)
		_ = unix.Close(fds.children)
		if fds.rollup >= 0 {
			_ = unix.Close(fds.rollup)
		}
		delete(p.open, pid)
	}
}

// keep closes the files of every process not in live.
func (p *procFiles) keep(live map[int]bool) {
	for pid := range p.open {
		if !live[pid] {
			p.drop(pid)
		}
	}
}

// close closes every cached file.
func (p *procFiles) close() {
	for pid := range p.open {
		p.drop(pid)
	}
}

// appendPids appends the pids listed in a children file.
func appendPids(b []byte, out []int) []int {
	sc := fieldScanner{b: b}
	for f, ok := sc.next(); ok; f, ok = sc.next() {
		if c := atoi(f); c > 0 {
			out = append(out, int(c))
		}
	}
	return out
}
