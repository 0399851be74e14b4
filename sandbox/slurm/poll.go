package slurm

import (
	"context"
	"strings"
	"sync"
	"time"
)

// Polling bounds: the first poll after a submission comes after pollMin,
// then the interval doubles up to pollMax; a state change resets it.
const (
	pollMin = 250 * time.Millisecond
	pollMax = 5 * time.Second
)

// jobState is what the scheduler says about one job.
type jobState struct {
	Known  bool   // listed by squeue or sacct
	State  string // PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, …
	Node   string
	Reason string
}

// active reports whether the scheduler still holds the job as queued or
// running (a record may follow).
func (s jobState) active() bool {
	switch s.State {
	case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT":
		return true
	}
	return false
}

// watch is one job the poller follows.
type watch struct {
	heartbeat string
	states    chan jobState // the latest state, buffered (1)
}

// poller runs one batched squeue/sacct for every job still waiting, at a
// bounded rate, and touches their heartbeat files. Its goroutine runs while
// any job is watched.
type poller struct {
	c       *Cluster
	mu      sync.Mutex
	jobs    map[string]*watch
	running bool
	kick    chan struct{}
	wg      sync.WaitGroup
}

func newPoller(c *Cluster) *poller {
	return &poller{c: c, jobs: map[string]*watch{}, kick: make(chan struct{}, 1)}
}

// add follows job id; the returned channel carries its states until remove.
func (p *poller) add(id, heartbeat string) <-chan jobState {
	w := &watch{heartbeat: heartbeat, states: make(chan jobState, 1)}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.jobs[id] = w
	if !p.running {
		p.running = true
		p.wg.Go(p.loop)
	}
	select {
	case p.kick <- struct{}{}:
	default:
	}
	return w.states
}

func (p *poller) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.jobs, id)
}

// loop polls until no job is left.
func (p *poller) loop() {
	interval := pollMin
	var beat time.Time // the first poll touches every heartbeat (a re-attached job's may be old)
	for {
		timer := time.NewTimer(interval)
		select {
		case <-p.kick:
			interval = pollMin
		case <-timer.C:
		}
		timer.Stop()
		ids, watches := p.snapshot()
		if len(ids) == 0 {
			return
		}
		if time.Since(beat) >= p.beatEvery() {
			beat = time.Now()
			for _, w := range watches {
				_ = p.c.cfg.Files.Touch(w.heartbeat) // a failed touch shows as a stale heartbeat on the node
			}
		}
		if p.publish(ids, watches, p.c.states(context.Background(), ids)) {
			interval = pollMin
		} else {
			interval = min(interval*2, pollMax)
		}
	}
}

// beatEvery is how often heartbeats are touched: a quarter of the grace,
// between 100 ms and 10 s.
func (p *poller) beatEvery() time.Duration {
	return min(max(p.c.cfg.Grace/4, 100*time.Millisecond), 10*time.Second)
}

// snapshot returns the watched ids, or stops the loop when there are none.
func (p *poller) snapshot() ([]string, []*watch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.jobs) == 0 {
		p.running = false
		return nil, nil
	}
	ids := make([]string, 0, len(p.jobs))
	ws := make([]*watch, 0, len(p.jobs))
	for id, w := range p.jobs {
		ids, ws = append(ids, id), append(ws, w)
	}
	return ids, ws
}

// publish hands each watch its latest state and reports whether any
// changed.
func (p *poller) publish(ids []string, ws []*watch, got map[string]jobState) bool {
	changed := false
	for i, id := range ids {
		st := got[id]
		select {
		case old := <-ws[i].states:
			changed = changed || old != st
		default:
			changed = true
		}
		ws[i].states <- st
	}
	return changed
}

// states asks squeue about ids in one call, then sacct about those squeue
// no longer lists (sacct fails where accounting is off; that is ignored).
func (c *Cluster) states(ctx context.Context, ids []string) map[string]jobState {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	got := map[string]jobState{}
	out, err := c.cfg.Exec.Output(ctx, "squeue", "-h", "--states=all", "-j", strings.Join(ids, ","), "-o", "%i|%T|%N|%r")
	if err == nil || strings.Contains(err.Error(), "Invalid job id") {
		parseRows(out, got)
	} else {
		return unknownAll(ids) // squeue failed: say nothing rather than "vanished"
	}
	var missing []string
	for _, id := range ids {
		if !got[id].Known {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		out, err := c.cfg.Exec.Output(ctx, "sacct", "-n", "-X", "-P", "-j", strings.Join(missing, ","), "-o", "JobID,State,NodeList,Reason")
		if err == nil {
			parseRows(out, got)
		}
	}
	return got
}

// unknownAll marks every id as not yet answered (State "" but Known true),
// so a failed poll never reads as a vanished job.
func unknownAll(ids []string) map[string]jobState {
	got := make(map[string]jobState, len(ids))
	for _, id := range ids {
		got[id] = jobState{Known: true}
	}
	return got
}

// parseRows reads "id|STATE|node|reason" rows; sacct's "CANCELLED by 0"
// keeps its first word.
func parseRows(out string, into map[string]jobState) {
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) < 4 || f[0] == "" {
			continue
		}
		state, _, _ := strings.Cut(f[1], " ")
		into[f[0]] = jobState{Known: true, State: state, Node: f[2], Reason: f[3]}
	}
}
