package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Cleaning up on the worker: once the coordinator has fetched a job's
// outputs and checked their hashes, it sends release; the daemon removes
// the job's folder (request, state, artifacts) and every input blob no
// other unreleased job names. A small record of the job stays in
// ROOT/state/collected/JOB.json, so the same id is still answered with its
// outcome (a re-attaching coordinator finds it finished, never reruns it).

// opRelease is jobArgs → JobState (Collected set) once the job's folder is gone.
const opRelease = "release"

// collected is what stays of a released job.
type collected struct {
	Request JobRequest `json:"request"`
	State   JobState   `json:"state"`
}

func (d *daemon) collectedPath(id string) string {
	return filepath.Join(d.root, "collected", id+".json")
}

// release removes a finished job's folder and the blobs only it used.
func (d *daemon) release(f frame) (JobState, error) {
	j, err := d.find(f.Body)
	if err != nil || j == nil {
		return JobState{Status: jobNotFound}, errors.Join(err, errors.New("release: no such job"))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.state.Collected:
		return j.state, nil
	case j.state.Status != jobFinished:
		return j.state, fmt.Errorf("release: job %s is %s, not finished", j.req.ID, j.state.Status)
	}
	st := j.state
	st.Collected = true
	b, err := json.Marshal(collected{Request: j.req, State: st})
	if err != nil {
		return j.state, fmt.Errorf("release: %w", err)
	}
	if err := writePrivate(d.collectedPath(j.req.ID), b); err != nil {
		return j.state, fmt.Errorf("release: %w", err)
	}
	j.state = st
	if err := os.RemoveAll(j.dir); err != nil {
		return j.state, fmt.Errorf("release: %w", err)
	}
	return j.state, d.dropBlobsLocked(j)
}

// dropBlobsLocked removes the inputs of released job r that no other
// unreleased job uses; d.mu and r.mu held.
func (d *daemon) dropBlobsLocked(r *job) error {
	used := map[string]bool{}
	for _, j := range d.jobs {
		if j == r || j.isCollected() {
			continue
		}
		for _, in := range j.req.Inputs {
			used[in.SHA256] = true
		}
	}
	var errs []error
	for _, in := range r.req.Inputs {
		if used[in.SHA256] {
			continue
		}
		if err := os.Remove(d.blobPath(in.SHA256)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("release: blob %s: %w", in.SHA256, err))
		}
	}
	return errors.Join(errs...)
}

func (j *job) isCollected() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state.Collected
}

// reconcileCollected loads the records of released jobs (after the jobs of
// reconcile, which they replace: a folder left by a crash mid-release goes).
func (d *daemon) reconcileCollected() {
	entries, _ := os.ReadDir(filepath.Join(d.root, "collected"))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !jobPattern.MatchString(id) {
			continue
		}
		var c collected
		if readJSON(filepath.Join(d.root, "collected", e.Name()), &c) != nil || c.Request.ID != id {
			continue
		}
		j := &job{d: d, dir: filepath.Join(d.root, "jobs", id), req: c.Request, state: c.State, done: make(chan struct{})}
		close(j.done)
		_ = os.RemoveAll(j.dir)
		d.jobs[id] = j
	}
}
