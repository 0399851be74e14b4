package scripted

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// python is the interpreter the demo experiments run under.
const python = "/usr/bin/python3"

// needPython skips a test on hosts without python3.
func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no %s: %v", python, err)
	}
}

// simHost is an in-process stand-in for the supervisor: it answers lab calls,
// runs queued experiments with python3 between turns and judges queued
// reviews with the scripted reviewer.
type simHost struct {
	t        *testing.T
	research string
	expDir   string
	snap     Snapshot
	requests map[string]runRequest
	pending  map[string]reviewRequest
	acc      map[string]string
	next     int
}

// newSimHost creates a campaign with the demo hypothesis as root.
func newSimHost(t *testing.T) *simHost {
	dir := t.TempDir()
	h := &simHost{t: t, research: filepath.Join(dir, "research"), expDir: filepath.Join(dir, "experiments"),
		requests: map[string]runRequest{}, pending: map[string]reviewRequest{}, acc: map[string]string{}}
	for _, d := range []string{h.research, h.expDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.snap = Snapshot{Status: "running", Claims: []Claim{{ID: rootClaim, Statement: DemoHypothesis(), Status: claimOpen}}}
	return h
}

// Call implements Lab.
func (h *simHost) Call(_ context.Context, name string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var res any
	switch name {
	case "status":
		res = h.snap
	case "run":
		res, err = h.run(body)
	case "commit":
		res, err = h.commit(body)
	case "review":
		res, err = h.review(body)
	case "note":
		res = map[string]string{"id": "note"}
	default:
		return fmt.Errorf("%w: %s", ErrLab, name)
	}
	if err != nil {
		return err
	}
	data, err := json.Marshal(res)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// run records an experiment idempotently by the identity of its request.
func (h *simHost) run(body []byte) (Receipt, error) {
	var r runRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return Receipt{}, err
	}
	sum := sha256.Sum256(body)
	id := "exp_" + hex.EncodeToString(sum[:12])
	for _, rc := range h.snap.Experiments {
		if rc.ID == id {
			return rc, nil
		}
	}
	rc := Receipt{ID: id, Status: statusQueued, Source: r.Source, Args: r.Args, Outputs: r.Outputs,
		ArtifactDir: filepath.Join(h.expDir, id)}
	h.requests[id] = r
	h.snap.Experiments = append(h.snap.Experiments, rc)
	return rc, nil
}

// commit adds a child claim.
func (h *simHost) commit(body []byte) (Claim, error) {
	var c commitRequest
	if err := json.Unmarshal(body, &c); err != nil {
		return Claim{}, err
	}
	h.next++
	claim := Claim{ID: fmt.Sprintf("c%d", h.next), Statement: c.Statement, Parent: c.Parent, Status: claimOpen}
	h.acc[claim.ID] = c.Acceptance
	h.snap.Claims = append(h.snap.Claims, claim)
	return claim, nil
}

// review queues a review request.
func (h *simHost) review(body []byte) (ReviewRequest, error) {
	var r reviewRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return ReviewRequest{}, err
	}
	h.next++
	rev := ReviewRequest{ID: fmt.Sprintf("rev_%d", h.next), Claim: r.Claim, Disposition: r.Disposition, Status: reviewQueued}
	h.pending[rev.ID] = r
	h.snap.Reviews = append(h.snap.Reviews, rev)
	return rev, nil
}

// between runs every queued experiment and judges every queued review.
func (h *simHost) between() {
	for i := range h.snap.Experiments {
		if h.snap.Experiments[i].Status == statusQueued {
			h.execute(&h.snap.Experiments[i])
		}
	}
	for i := range h.snap.Reviews {
		if h.snap.Reviews[i].Status == reviewQueued {
			h.judge(&h.snap.Reviews[i])
		}
	}
}

// execute runs one experiment with python3 in its artifact folder.
func (h *simHost) execute(rc *Receipt) {
	req := h.requests[rc.ID]
	if err := os.MkdirAll(rc.ArtifactDir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command(python, append([]string{filepath.Join(h.research, req.Source)}, req.Args...)...)
	cmd.Dir = rc.ArtifactDir
	out, err := cmd.CombinedOutput()
	wall := time.Since(start).Seconds()
	rc.WallSeconds = &wall
	if err != nil {
		rc.Status = "failed"
		return
	}
	rc.Status, rc.Artifacts = statusSucceeded, map[string]Artifact{}
	for _, o := range req.Outputs {
		data, err := os.ReadFile(filepath.Join(rc.ArtifactDir, o))
		if err != nil {
			h.t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		rc.Artifacts[o] = Artifact{SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}
	}
	h.t.Logf("ran %s %v in %.3f s: %s", rc.ID, req.Args, wall, bytes.TrimSpace(out))
}

// judge builds the packet of a review and applies the scripted verdict.
func (h *simHost) judge(rev *ReviewRequest) {
	req := h.pending[rev.ID]
	claim, _ := h.snap.claim(req.Claim)
	p := Packet{ClaimID: req.Claim, Statement: claim.Statement, Disposition: req.Disposition, Conclusion: req.Conclusion,
		Hypothesis: DemoHypothesis(), Instructions: DemoInstructions(), Acceptance: h.acc[req.Claim]}
	if claim.Parent != "" {
		parent, _ := h.snap.claim(claim.Parent)
		p.Parent = rawJSON(h.t, parent)
	}
	ids := req.Experiments
	if req.Challenge != nil {
		p.Challenge = &PacketChallenge{Strategy: req.Challenge.Strategy, Outcome: req.Challenge.Outcome,
			Experiments: rawJSON(h.t, req.Challenge.Experiments)}
		ids = append(ids, req.Challenge.Experiments...)
	}
	for _, rc := range h.snap.Experiments {
		if slices.Contains(ids, rc.ID) {
			p.Experiments = append(p.Experiments, rc)
		}
	}
	v := Review(p)
	h.t.Logf("review %s of %s as %s: %s — %s", rev.ID, req.Claim, req.Disposition, v.Decision, v.Rationale)
	rev.Status, rev.Verdict = "resolved", &v
	if v.Decision != decisionApproved {
		return
	}
	for i := range h.snap.Claims {
		if h.snap.Claims[i].ID == req.Claim {
			h.snap.Claims[i].Status = v.Disposition
		}
	}
}

// TestDemoStudyEndToEnd drives the whole demo through the worker and reviewer
// with real kepler.py runs: root is falsified, the repair is supported.
func TestDemoStudyEndToEnd(t *testing.T) {
	needPython(t)
	h := newSimHost(t)
	var log bytes.Buffer
	w := &Worker{Lab: h, Dir: h.research, Log: &log}
	turns := 0
	for ; turns < 8 && !h.repairSupported(); turns++ {
		w.Turn = fmt.Sprint(turns + 1)
		if err := w.Run(context.Background()); err != nil {
			t.Fatalf("turn %d: %v\n%s", turns+1, err, log.String())
		}
		h.between()
	}
	t.Logf("worker log:\n%s", log.String())
	root, _ := h.snap.claim(rootClaim)
	if root.Status != dispFalsified || !h.repairSupported() {
		t.Fatalf("after %d turns: claims %+v", turns, h.snap.Claims)
	}
	if n := len(h.snap.Experiments); n != 3 || turns != 4 {
		t.Fatalf("%d experiments in %d turns, want 3 in 4", n, turns)
	}
}

// repairSupported reports whether a child of root is supported.
func (h *simHost) repairSupported() bool {
	for _, c := range h.snap.Claims {
		if c.Parent == rootClaim && c.Status == dispSupported {
			return true
		}
	}
	return false
}
