package sandbox

// cpuTally is the CPU time (user + system, in clock ticks) the samples saw a
// run's processes use: each process's latest utime + stime, those that ended
// included. RLIMIT_CPU holds each process to the run's CPU limit; the tally
// holds the whole tree to it, so that an experiment's processes together
// use at most timeout × cpus + 1 seconds (contract, section lab run). CPU a
// process used after the last sample that saw it is not counted.
type cpuTally struct {
	last  map[procKey]uint64
	total uint64
}

// see records that process (pid, start) has used ticks so far.
func (c *cpuTally) see(pid int, start, ticks uint64) {
	if c.last == nil {
		c.last = map[procKey]uint64{}
	}
	k := procKey{pid, start}
	if old := c.last[k]; ticks > old {
		c.total += ticks - old
		c.last[k] = ticks
	}
}

// forget drops a process that ended; what it used stays in the total.
func (c *cpuTally) forget(pid int, start uint64) { delete(c.last, procKey{pid, start}) }

// seconds is the tally in seconds.
func (c *cpuTally) seconds() float64 { return float64(c.total) / clockTicks }

// overCPU reports whether the tree used more CPU than the run's limit.
func (w *watchdog) overCPU() bool {
	return w.cfg.CPULimit > 0 && w.cpu.seconds() > float64(w.cfg.CPULimit)
}
