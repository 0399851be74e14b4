package machine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// ErrLost is an experiment the worker lost (or could not be reached about
// for longer than its orphan grace): it is recorded interrupted, never failed.
var ErrLost = errors.New("experiment lost by its worker")

// ErrConnecting is a worker whose first connection is under way: placement
// waits for it rather than skipping it.
var ErrConnecting = errors.New("connecting")

// Reconnect backoff of a session.
const (
	backoffFirst = 200 * time.Millisecond
	backoffMax   = 5 * time.Second
	cancelWait   = 10 * time.Second // how long a cancel waits for the worker's report
)

// sshMachine is a worker reached over ssh.
type sshMachine struct {
	p Profile
	t sshTarget
	o Options

	mu      sync.Mutex
	sess    *session
	dialing bool
	lastErr error
	retryAt time.Time     // when Reachable may dial again after a failure
	backoff time.Duration // the wait after the last failed dial
}

// probeBackoffMax bounds the wait between Reachable's background dials to
// a worker that is down.
const probeBackoffMax = 30 * time.Second

func openSSH(p Profile, o Options) (Machine, error) {
	return &sshMachine{p: p, t: sshTarget{p: p}, o: o}, nil
}

func (m *sshMachine) ID() string { return m.p.ID }

// Close ends the session; experiments keep running until their grace.
func (m *sshMachine) Close() error {
	m.mu.Lock()
	s := m.sess
	m.sess = nil
	m.mu.Unlock()
	if s != nil {
		s.close()
	}
	return nil
}

// Reachable is nil while a session is up; otherwise it starts connecting
// in the background and reports the last failure.
func (m *sshMachine) Reachable(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sess != nil && m.sess.alive() {
		return nil
	}
	if !m.dialing && time.Now().After(m.retryAt) {
		m.dialing = true
		go func() { _, _ = m.conn(context.WithoutCancel(ctx)) }()
	}
	if m.lastErr != nil {
		return m.lastErr
	}
	return fmt.Errorf("worker %s: %w", m.p.ID, ErrConnecting)
}

// CapabilityHashes are the capabilities the worker reported at its last
// connect; ok is false until it has been reached once.
func (m *sshMachine) CapabilityHashes() (map[string]string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sess == nil {
		return nil, false
	}
	return m.sess.hello.Capabilities, true
}

// conn returns the live session, dialling a new one when needed.
func (m *sshMachine) conn(ctx context.Context) (*session, error) {
	m.mu.Lock()
	if m.sess != nil && m.sess.alive() {
		s := m.sess
		m.mu.Unlock()
		return s, nil
	}
	m.mu.Unlock()
	sum, err := fileSHA256(m.o.SelfExe)
	var s *session
	if err == nil {
		s, err = dial(ctx, m.t, sum)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dialing, m.lastErr = false, err
	if err != nil {
		m.backoff = min(max(2*m.backoff, backoffFirst), probeBackoffMax)
		m.retryAt = time.Now().Add(m.backoff)
		return nil, err
	}
	m.backoff = 0
	if m.sess != nil && m.sess.alive() { // another caller won the race
		go s.close()
		return m.sess, nil
	}
	m.sess = s
	return s, nil
}

// Run runs one experiment on the worker, re-attaching after a dropped
// connection (the job id makes every request idempotent). A worker that
// stays unreachable for longer than its orphan grace has stopped the
// experiment: that, or a worker that lost it, is ErrLost.
func (m *sshMachine) Run(ctx context.Context, job string, spec sandbox.Spec) (sandbox.Result, Remote, error) {
	remote := Remote{Host: m.p.Host, Job: job}
	req, err := jobRequest(job, m.p.ExecutionBackend, spec)
	if err != nil {
		return sandbox.Result{}, remote, err
	}
	a := &attempt{m: m, req: req, spec: spec, started: time.Now()}
	res, err := a.loop(ctx)
	m.mu.Lock()
	if m.sess != nil {
		remote.Node = m.sess.hello.Host
	}
	m.mu.Unlock()
	return res, remote, err
}

func jobRequest(job string, backend sandbox.Backend, s sandbox.Spec) (JobRequest, error) {
	req := JobRequest{ID: job, Backend: backend, Command: s.Command, Env: s.Env, Outputs: s.Outputs,
		TimeoutSeconds: s.Timeout.Seconds(), CPUs: s.CPUs, MemoryBytes: s.MemoryBytes,
		MaxFileBytes: s.MaxFileBytes, WorkspaceBytes: s.WorkspaceBytes}
	ro := s.ReadOnly
	if c := s.Capability; c != nil {
		ref := *c
		req.Capability = &ref
		ro = slices.DeleteFunc(slices.Clone(ro), func(m sandbox.Mount) bool { return m.Virtual == sandbox.CapabilityRoot+"/"+c.Name })
	}
	if len(ro) > 0 { // host folders a worker does not have: never shipped
		return req, fmt.Errorf("capabilities with extra read-only mounts run only on this host, not on a worker: %w", ErrRefused)
	}
	for _, f := range s.Sealed {
		info, err := os.Stat(f.HostPath)
		if err != nil {
			return req, fmt.Errorf("input %s: %w", f.Rel, err)
		}
		req.Inputs = append(req.Inputs, Input{Rel: f.Rel, SHA256: f.SHA256, Bytes: info.Size()})
	}
	sort.Slice(req.Inputs, func(i, j int) bool { return req.Inputs[i].Rel < req.Inputs[j].Rel })
	return req, nil
}

var fileSums sync.Map // path → sha256 of our binary

func fileSHA256(p string) (string, error) {
	if v, ok := fileSums.Load(p); ok {
		return v.(string), nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", p, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", p, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	fileSums.Store(p, sum)
	return sum, nil
}

func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("artifact dir: %w", err)
	}
	return nil
}

// artifactPath is where a fetched file lands.
func artifactPath(dir, name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
