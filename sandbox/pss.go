package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// The memory a tree holds. Each process's resident set (from its stat)
// counts the pages it shares copy-on-write with its parent after fork() in
// full, so their sum over a tree that forked workers counts those pages
// once per process: a parent holding 150 MiB and three idle children sum to
// ≈ 630 MiB while the tree holds ≈ 160 MiB. The proportional set size (Pss
// in /proc/<pid>/smaps_rollup, a page shared by n processes counting 1/n)
// sums to what the tree holds, but costs a walk of every mapping, so it is
// read only when the cheap sum matters: at a new high or over the memory
// limit, and only when it could differ (more than one process, and the
// tree changed since the last reading — see treeTally).

// treeTally is what one sample counted over the run's processes. Equal
// tallies mean no process's memory can have grown in between: a page
// becomes resident or private (a copy-on-write break) only through a page
// fault, and every process's faults are in the count.
type treeTally struct {
	procs  int
	rss    int64 // Σ resident set, in bytes
	faults int64 // Σ minor + major page faults
	pids   int64 // Σ pid: another set of processes changes it
}

func (t *treeTally) add(pid int, st procStat) {
	t.procs++
	t.rss += st.rssPages * pageSize
	t.faults += st.faults
	t.pids += int64(pid)
}

// pssReading is the tree's last PSS sum and the tally it was read at.
type pssReading struct {
	at  treeTally
	pss int64
}

// memory is the sample's figure for what the tree holds: the resident sum
// for one process (as the kernel's maxrss counts it) or when it is neither
// a new high nor over the limit, else the PSS sum. Where smaps_rollup
// cannot be read it stays the resident sum: an over-count, never an
// under-count.
func (w *watchdog) memory(t *treeTally, pids []int) int64 {
	// The first sample, at the launch, counts for no peak (see sample).
	newHigh := w.rep.Samples > 0 && t.rss > w.rep.PeakRSS
	over := newHigh || (w.cfg.Memory > 0 && t.rss > w.cfg.Memory)
	if t.procs < 2 || !over {
		return t.rss
	}
	if w.pss != nil && w.pss.at == *t {
		return w.pss.pss
	}
	pss, err := w.files.treePSS(pids)
	if err != nil {
		return t.rss
	}
	w.pss = &pssReading{at: *t, pss: pss}
	return pss
}

// rollupSupported says whether this kernel has smaps_rollup (Linux 4.14).
var rollupSupported = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/smaps_rollup")
	return err == nil
})

var errNoPss = errors.New("smaps_rollup has no Pss line")

// treePSS sums the PSS of pids; a process that is gone counts 0. It fails
// when some process's smaps_rollup cannot be read (permissions, an old
// kernel).
func (p *procFiles) treePSS(pids []int) (int64, error) {
	if !rollupSupported() {
		return 0, fmt.Errorf("pss: %w", errors.ErrUnsupported)
	}
	var buf [2048]byte
	var sum int64
	for _, pid := range pids {
		v, err := p.pss(pid, buf[:])
		if err != nil {
			return 0, fmt.Errorf("pss of %d: %w", pid, err)
		}
		sum += v
	}
	return sum, nil
}

// pss reads one process's PSS, through its kept-open smaps_rollup when it
// has cached files. That file holds the memory the process had when it was
// opened, so after an exec it fails and is opened afresh.
func (p *procFiles) pss(pid int, buf []byte) (int64, error) {
	fds, cached := p.open[pid]
	if cached && fds.rollup >= 0 {
		if v, err := preadPss(fds.rollup, buf); err == nil {
			return v, nil
		}
		_ = unix.Close(fds.rollup)
		fds.rollup = -1
		p.open[pid] = fds
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/smaps_rollup", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, ifAlive(err)
	}
	v, err := preadPss(fd, buf)
	if cached && err == nil {
		fds.rollup = fd
		p.open[pid] = fds
	} else {
		_ = unix.Close(fd)
	}
	return v, ifAlive(err)
}

// ifAlive drops the errors of a process that ended (or is a zombie, which
// holds no memory): it counts 0.
func ifAlive(err error) error {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// preadPss reads the Pss line of an open smaps_rollup, in bytes.
func preadPss(fd int, buf []byte) (int64, error) {
	n, err := unix.Pread(fd, buf, 0)
	if err != nil {
		return 0, err
	}
	return parsePss(buf[:n])
}

func parsePss(b []byte) (int64, error) {
	i := bytes.Index(b, []byte("\nPss:"))
	if i < 0 {
		return 0, errNoPss
	}
	sc := fieldScanner{b: b[i+len("\nPss:"):]}
	f, _ := sc.next()
	kb := atoi(f)
	if kb < 0 {
		return 0, errNoPss
	}
	return kb << 10, nil
}
