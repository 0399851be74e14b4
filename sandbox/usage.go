package sandbox

import "time"

// UsageEvery is how often a run with Spec.Usage set reports its live
// figures: the watchdog samples the tree 20 times a second anyway, so a
// report costs one message on the runner's wire, not a walk of /proc.
const UsageEvery = time.Second

// Usage is a running experiment's live figures, as its watchdog last
// sampled them. They are not receipt data: a run's final figures are its
// Result's.
type Usage struct {
	CPUSeconds float64   `json:"cpu_seconds"` // the tree's CPU time so far (user + system), ended processes included
	RSSBytes   int64     `json:"rss_bytes"`   // the memory the tree holds now (RSS, or PSS for a forked tree)
	Processes  int       `json:"processes"`   // the processes of the tree now
	At         time.Time `json:"at"`          // when the watchdog sampled it
}

// CPUPercent is the CPU the tree used between an earlier sample and u, as
// a percentage of one core; 0 when there is no earlier sample or no time
// passed between them.
func (u Usage) CPUPercent(prev Usage) float64 {
	wall := u.At.Sub(prev.At).Seconds()
	if prev.At.IsZero() || wall <= 0 || u.CPUSeconds < prev.CPUSeconds {
		return 0
	}
	return (u.CPUSeconds - prev.CPUSeconds) / wall * 100
}

// reportUsage sends the run's live figures when a report is due (serve mode only: a one-shot helper has no wire
// to report on).
func (w *watchdog) reportUsage() {
	if w.usage == nil || w.cfg.UsageEvery <= 0 || time.Since(w.lastUsage) < w.cfg.UsageEvery {
		return
	}
	w.lastUsage = time.Now()
	w.usage(Usage{CPUSeconds: w.cpu.seconds(), RSSBytes: w.lastRSS, Processes: w.lastProcs, At: w.lastUsage.UTC()})
}
