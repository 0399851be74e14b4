package machine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// CheckReport is `worker check`'s answer.
type CheckReport struct {
	Worker     string         `json:"worker"`
	Ready      bool           `json:"ready"`
	Reason     string         `json:"reason,omitempty"`
	Protocol   string         `json:"protocol"`
	Host       string         `json:"host,omitempty"`
	UID        *int           `json:"uid"`
	Clock      time.Time      `json:"clock"`
	ClockSkew  *float64       `json:"clock_skew_seconds"`
	Backend    sandbox.Report `json:"backend"`
	CPUs       int            `json:"cpus"`
	MemoryMB   int64          `json:"memory_mb"`
	MaxJobs    int            `json:"max_jobs"`
	Experiment *CheckRun      `json:"experiment"`
}

// CheckRun is the trivial experiment check runs on the worker.
type CheckRun struct {
	Status      string  `json:"status"`
	WallSeconds float64 `json:"wall_seconds"`
}

// Probe checks a worker: protocol, clock skew, its backend's probe, its
// capacity and one real trivial experiment.
func Probe(ctx context.Context, p Profile, o Options) (CheckReport, error) {
	info, err := Describe(p.Kind)
	if err != nil {
		return CheckReport{}, err
	}
	return info.Probe(ctx, p, o)
}

func probeSSH(ctx context.Context, p Profile, o Options) (CheckReport, error) {
	rep := CheckReport{Worker: p.ID, CPUs: p.CPUs, MemoryMB: p.MemoryMB, MaxJobs: p.MaxJobs}
	m := &sshMachine{p: p, t: sshTarget{p: p}, o: o}
	defer m.Close()
	before := time.Now()
	s, err := m.conn(ctx)
	if err != nil {
		rep.Reason = err.Error()
		return rep, nil
	}
	h := s.hello
	skew := h.Clock.Sub(before.Add(time.Since(before) / 2)).Seconds()
	rep.Protocol, rep.Host, rep.UID, rep.Clock, rep.ClockSkew, rep.Backend = h.Protocol, h.Host, &h.UID, h.Clock, &skew, h.Backend
	switch {
	case !h.Backend.Available:
		rep.Reason = fmt.Sprintf("execution backend on the worker: %s (%s)", h.Backend.Reason, h.Backend.Remedy)
		return rep, nil
	case h.UID == 0:
		rep.Reason = "the worker session runs as root"
		return rep, nil
	}
	run, err := trivialRun(ctx, m)
	rep.Experiment = run
	if err != nil {
		rep.Reason = "trivial experiment: " + err.Error()
		return rep, nil
	}
	rep.Ready = run.Status == "succeeded"
	if !rep.Ready {
		rep.Reason = "trivial experiment " + run.Status
	}
	return rep, nil
}

// trivialRun runs `echo ok > ok.txt` on the worker.
func trivialRun(ctx context.Context, m Machine) (*CheckRun, error) {
	dir, err := os.MkdirTemp("", "simjecture-check-")
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "check.sh")
	if err := os.WriteFile(src, []byte("echo ok > ok.txt\n"), 0o644); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	sum, _, err := sandbox.HashFile(src)
	if err != nil {
		return nil, err
	}
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	spec := sandbox.Spec{Sealed: []sandbox.SealedFile{{Rel: "check.sh", HostPath: src, SHA256: sum}},
		Command: []string{"sh", "/work/check.sh"}, Outputs: []string{"ok.txt"}, Timeout: 30 * time.Second,
		CPUs: 1, MemoryBytes: 256 << 20, MaxFileBytes: 1 << 20, WorkspaceBytes: 16 << 20,
		ArtifactDir: filepath.Join(dir, "artifacts")}
	job := "check_" + hex.EncodeToString(nonce[:])
	res, _, err := m.Run(ctx, job, spec)
	if f, ok := m.(Forgetter); ok && err == nil {
		_ = f.Forget(ctx, job) // nothing reads a check's files again; a failure leaves them
	}
	if err != nil {
		return nil, err
	}
	status := "failed"
	if res.ReturnCode != nil && *res.ReturnCode == 0 && len(res.MissingOutputs) == 0 {
		status = "succeeded"
	}
	return &CheckRun{Status: status, WallSeconds: res.WallSeconds}, nil
}

// State connects to a worker and says in a few words whether it can take
// experiments (for doctor); it runs nothing.
func State(ctx context.Context, p Profile, o Options) (string, bool) {
	info, err := Describe(p.Kind)
	if err != nil {
		return err.Error(), false
	}
	return info.State(ctx, p, o)
}

func stateLocal(context.Context, Profile, Options) (string, bool) { return "this host", true }

func stateSSH(ctx context.Context, p Profile, o Options) (string, bool) {
	m := &sshMachine{p: p, t: sshTarget{p: p}, o: o}
	defer m.Close()
	cctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	s, err := m.conn(cctx)
	switch {
	case err != nil:
		return "unreachable: " + err.Error(), false
	case !s.hello.Backend.Available:
		return "reachable, but its execution backend is unavailable: " + s.hello.Backend.Reason, false
	}
	return fmt.Sprintf("ready (%s on %s, uid %d)", backendOf(s.hello.Backend), s.hello.Host, s.hello.UID), true
}

func backendOf(r sandbox.Report) sandbox.Backend {
	if r.Selected != "" {
		return r.Selected
	}
	return r.Backend
}
