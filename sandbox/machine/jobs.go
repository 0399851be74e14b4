package machine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sync"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

var jobPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,79}$`)

// job is one experiment on the worker.
type job struct {
	d   *daemon
	dir string
	req JobRequest

	mu     sync.Mutex
	state  JobState
	stop   context.CancelFunc
	done   chan struct{}
	reason string // why it was stopped by the worker itself (orphaned)
}

func (j *job) active() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state.Status == jobRunning
}

func (j *job) snapshot() JobState {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state
}

// setUsage keeps a running job's latest live figures for its status.
func (j *job) setUsage(u sandbox.Usage) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state.Status == jobRunning {
		j.state.Usage = &u
	}
}

// save writes the job's state, without its live figures; d.mu or j.mu
// held by the caller.
func (j *job) saveLocked() error {
	st := j.state
	st.Usage = nil
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("job state: %w", err)
	}
	return writePrivate(filepath.Join(j.dir, "state.json"), b)
}

// probe is the daemon's probe of backend b, made once (a probe starts the
// launcher; every experiment must not pay for it).
func (d *daemon) probe(ctx context.Context, b sandbox.Backend) sandbox.Report {
	d.mu.Lock()
	defer d.mu.Unlock()
	if rep, ok := d.probes[b]; ok {
		return rep
	}
	rep := sandbox.Select(ctx, b)
	if rep.Available {
		d.probes[b] = rep
	}
	return rep
}

// resolve is the backend a job of backend b runs under (auto resolved).
func (d *daemon) resolve(ctx context.Context, b sandbox.Backend) sandbox.Backend {
	if rep := d.probe(ctx, b); rep.Selected != "" {
		return rep.Selected
	}
	return b
}

func (d *daemon) hello(ctx context.Context, f frame) (helloReply, error) {
	var a helloArgs
	if err := json.Unmarshal(f.Body, &a); err != nil {
		return helloReply{}, fmt.Errorf("hello: %w", err)
	}
	if a.Protocol != Protocol {
		return helloReply{}, fmt.Errorf("protocol %q is not the worker's %q: run simjecture worker prepare", a.Protocol, Protocol)
	}
	host, _ := os.Hostname()
	sum, _ := selfSHA256()
	return helloReply{Protocol: Protocol, Host: host, UID: os.Geteuid(), Clock: time.Now().UTC(),
		Backend: d.probe(ctx, a.Backend), CPUs: runtime.NumCPU(), BinarySHA: sum, Capabilities: d.capabilities()}, nil
}

func (d *daemon) create(f frame) (createReply, error) {
	var req JobRequest
	if err := json.Unmarshal(f.Body, &req); err != nil {
		return createReply{}, fmt.Errorf("create: %w", err)
	}
	if !jobPattern.MatchString(req.ID) {
		return createReply{}, fmt.Errorf("create: job id %q is malformed", req.ID)
	}
	j, err := d.jobFor(req)
	if err != nil {
		return createReply{}, err
	}
	var missing []blobState
	for _, in := range req.Inputs {
		if j.isCollected() {
			break // its outcome stands; its inputs are gone
		}
		if have := d.blobHave(in.SHA256); have != in.Bytes || !d.blobComplete(in.SHA256) {
			missing = append(missing, blobState{SHA256: in.SHA256, Have: have})
		}
	}
	return createReply{State: j.snapshot(), Missing: missing}, nil
}

// jobFor returns the job of req's id, creating it; the same id with
// another request is refused.
func (d *daemon) jobFor(req JobRequest) (*job, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if j, ok := d.jobs[req.ID]; ok {
		if !reflect.DeepEqual(j.req, req) {
			return nil, fmt.Errorf("create: job %s exists with a different request", req.ID)
		}
		return j, nil
	}
	j := &job{d: d, dir: filepath.Join(d.root, "jobs", req.ID), req: req, done: make(chan struct{}),
		state: JobState{ID: req.ID, Status: jobStaged}}
	if err := os.Mkdir(j.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create: %w", err)
	}
	b, _ := json.Marshal(req)
	if err := writePrivate(filepath.Join(j.dir, "request.json"), b); err != nil {
		return nil, err
	}
	if err := j.saveLocked(); err != nil {
		return nil, err
	}
	d.jobs[req.ID] = j
	return j, nil
}

func (d *daemon) find(body json.RawMessage) (*job, error) {
	var a jobArgs
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	j, ok := d.jobs[a.ID]
	if !ok {
		return nil, nil
	}
	return j, nil
}

func (d *daemon) status(f frame) (JobState, error) {
	j, err := d.find(f.Body)
	if err != nil || j == nil {
		var a jobArgs
		_ = json.Unmarshal(f.Body, &a)
		return JobState{ID: a.ID, Status: jobNotFound}, err
	}
	return j.snapshot(), nil
}

func (d *daemon) start(f frame) (JobState, error) {
	j, err := d.find(f.Body)
	if err != nil || j == nil {
		return JobState{Status: jobNotFound}, errors.Join(err, errors.New("start: no such job"))
	}
	for _, in := range j.req.Inputs {
		if !d.blobComplete(in.SHA256) {
			return JobState{}, fmt.Errorf("start: input %s (%s) has not arrived", in.Rel, in.SHA256)
		}
	}
	d.mu.Lock() // d.mu before j.mu, as everywhere: shutdown sees this job running or refuses it
	defer d.mu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state.Status != jobStaged {
		return j.state, nil
	}
	if d.stopping { // never run: lost, so its coordinator records it interrupted, not failed
		j.state.Status, j.state.Reason = jobLost, d.stopWhy
		if err := j.saveLocked(); err != nil {
			return JobState{}, err
		}
		close(j.done)
		return j.state, nil
	}
	ctx, stop := context.WithCancel(context.Background())
	j.state.Status, j.stop = jobRunning, stop
	if err := j.saveLocked(); err != nil {
		stop()
		return JobState{}, err
	}
	d.wg.Go(func() { j.run(ctx) })
	return j.state, nil
}

// run executes the job with the sandbox and records its outcome.
func (j *job) run(ctx context.Context) {
	defer close(j.done)
	defer j.stop()
	spec, release, err := j.d.spec(j)
	defer release()
	var res sandbox.Result
	if err == nil {
		spec.Usage = j.setUsage
		res, err = sandbox.Run(ctx, spec)
	}
	files := manifest(filepath.Join(j.dir, "artifacts"))
	j.mu.Lock()
	defer j.mu.Unlock()
	j.state.Usage = nil
	switch {
	case j.reason != "":
		j.state.Status, j.state.Reason = jobLost, j.reason
	case err != nil:
		j.state.Status, j.state.Reason = jobFinished, err.Error()
	default:
		j.state.Status, j.state.Result, j.state.Files = jobFinished, &res, files
	}
	if err := j.saveLocked(); err != nil {
		j.d.log.Error("record job", "job", j.req.ID, "err", err)
	}
}

// spec is the sandbox spec of j on this worker: its inputs are the blobs,
// its capability's runtime the worker's own shipped copy (re-checked and
// held until the job calls release, which it must do even on an error).
func (d *daemon) spec(j *job) (sandbox.Spec, func(), error) {
	r := j.req
	var ro []sandbox.Mount
	release := func() {}
	if r.Capability != nil {
		dir, held, err := d.runtimeFor(*r.Capability)
		if err != nil {
			return sandbox.Spec{}, release, err
		}
		release = held
		ro = []sandbox.Mount{{Host: dir, Virtual: sandbox.CapabilityRoot + "/" + r.Capability.Name}}
	}
	sealed := make([]sandbox.SealedFile, 0, len(r.Inputs))
	for _, in := range r.Inputs {
		sealed = append(sealed, sandbox.SealedFile{Rel: in.Rel, HostPath: d.blobPath(in.SHA256), SHA256: in.SHA256})
	}
	return sandbox.Spec{
		Backend: d.resolve(context.Background(), r.Backend), SelfExe: d.self, RunDir: filepath.Join(d.root, "runs", r.ID),
		ArtifactDir: filepath.Join(j.dir, "artifacts"), Sealed: sealed, Command: r.Command, Env: r.Env,
		Outputs: r.Outputs, Timeout: time.Duration(r.TimeoutSeconds * float64(time.Second)), CPUs: r.CPUs,
		MemoryBytes: r.MemoryBytes, MaxFileBytes: r.MaxFileBytes, WorkspaceBytes: r.WorkspaceBytes,
		ReadOnly: ro, Capability: r.Capability,
	}, release, nil
}

// manifest hashes every file of an artifact folder.
func manifest(dir string) map[string]sandbox.Artifact {
	out := map[string]sandbox.Artifact{}
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if sum, n, err := sandbox.HashFile(p); err == nil {
			out[filepath.ToSlash(rel)] = sandbox.Artifact{SHA256: sum, Bytes: n}
		}
		return nil
	})
	return out
}

func (d *daemon) wait(ctx context.Context, f frame) (JobState, error) {
	j, err := d.find(f.Body)
	if err != nil || j == nil {
		return JobState{Status: jobNotFound}, err
	}
	if j.snapshot().Status == jobStaged {
		return j.snapshot(), nil
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		return JobState{}, ctx.Err()
	}
	return j.snapshot(), nil
}

func (d *daemon) cancel(f frame) (JobState, error) {
	var a cancelArgs
	if err := json.Unmarshal(f.Body, &a); err != nil {
		return JobState{}, fmt.Errorf("cancel: %w", err)
	}
	j, err := d.find(f.Body)
	if err != nil || j == nil {
		return JobState{ID: a.ID, Status: jobNotFound}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stop != nil {
		j.stop()
	}
	return j.state, nil
}

// orphan stops a job no coordinator is attached to, recording why.
func (j *job) orphan(reason string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state.Status == jobRunning && j.reason == "" {
		j.reason = reason
		j.stop()
	}
}

// reconcile loads the jobs of an earlier daemon: a job it ran is lost
// (its process died with it); a staged one waits for its coordinator.
func (d *daemon) reconcile() {
	entries, _ := os.ReadDir(filepath.Join(d.root, "jobs"))
	for _, e := range entries {
		dir := filepath.Join(d.root, "jobs", e.Name())
		var req JobRequest
		var st JobState
		if readJSON(filepath.Join(dir, "request.json"), &req) != nil || readJSON(filepath.Join(dir, "state.json"), &st) != nil {
			continue
		}
		j := &job{d: d, dir: dir, req: req, state: st, done: make(chan struct{})}
		if st.Status == jobRunning {
			j.state.Status, j.state.Reason = jobLost, "the worker's daemon stopped while the experiment ran (restart, reboot or kill); it was not rerun"
			_ = j.saveLocked()
		}
		if j.state.Status != jobStaged {
			close(j.done)
		}
		d.jobs[req.ID] = j
	}
}

func readJSON(file string, v any) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
