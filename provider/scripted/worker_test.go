package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// labCall is one recorded request to the fake lab.
type labCall struct {
	name string
	req  json.RawMessage
}

// fakeLab answers lab calls from a canned snapshot and canned run receipts.
type fakeLab struct {
	snap  Snapshot
	runs  map[string]Receipt // by "method@e|key"; absent means a new queued run
	calls []labCall
}

// Call implements Lab.
func (f *fakeLab) Call(_ context.Context, name string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	f.calls = append(f.calls, labCall{name, body})
	var res any
	switch name {
	case "status":
		res = f.snap
	case "run":
		var r runRequest
		if err := json.Unmarshal(body, &r); err != nil {
			return err
		}
		k := r.Args[1] + "@" + r.Args[3] + "|" + r.Key
		rc, ok := f.runs[k]
		if !ok {
			rc = Receipt{ID: "exp_" + k, Status: statusQueued}
		}
		res = rc
	case "commit":
		res = Claim{ID: "c1", Parent: rootClaim, Status: claimOpen}
	case "review":
		res = ReviewRequest{ID: "rev_new", Status: reviewQueued}
	case "note":
		res = map[string]string{"id": "note_1"}
	default:
		return fmt.Errorf("%w: unknown call %s", ErrLab, name)
	}
	data, err := json.Marshal(res)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// names lists the calls made, in order.
func (f *fakeLab) names() []string {
	var out []string
	for _, c := range f.calls {
		out = append(out, c.name)
	}
	return out
}

// request decodes the n-th call named name.
func (f *fakeLab) request(t *testing.T, name string, n int, into any) {
	t.Helper()
	for _, c := range f.calls {
		if c.name != name {
			continue
		}
		if n == 0 {
			if err := json.Unmarshal(c.req, into); err != nil {
				t.Fatal(err)
			}
			return
		}
		n--
	}
	t.Fatalf("no call %s #%d in %v", name, n, f.names())
}

// openRoot is a snapshot with root open.
func openRoot() Snapshot {
	return Snapshot{Status: "running", Claims: []Claim{{ID: rootClaim, Statement: rootStatement, Status: claimOpen}}}
}

// falsifiedRoot is a snapshot after root's falsification was approved.
func falsifiedRoot() Snapshot {
	s := openRoot()
	s.Claims[0].Status = dispFalsified
	s.Reviews = []ReviewRequest{{ID: "rev_1", Claim: rootClaim, Disposition: dispFalsified, Status: "resolved",
		Verdict: &Verdict{Decision: decisionApproved, Disposition: dispFalsified}}}
	return s
}

// withRepair adds the open repair claim.
func withRepair(s Snapshot) Snapshot {
	s.Claims = append(s.Claims, Claim{ID: "c1", Statement: repairStatement, Parent: rootClaim, Status: claimOpen})
	return s
}

// refused adds a needs_revision review of a claim.
func refused(s Snapshot, claim string) Snapshot {
	s.Reviews = append(s.Reviews, ReviewRequest{ID: "rev_2", Claim: claim, Disposition: dispFalsified, Status: "resolved",
		Verdict: &Verdict{Decision: decisionNeedsRevision, EvidenceGaps: []string{"exp_x: artifact changed"}, NextTest: "re-run"}})
	return s
}

func TestWorkerTurn(t *testing.T) {
	t.Parallel()
	euler := fakeRun{"euler", 0.5, 10, 1000, 0.58187}
	leap := fakeRun{"leapfrog", 0.5, 10, 1000, 1.073e-4}
	hard := fakeRun{"leapfrog", 0.8, 100, 1000, 5.673e-3}
	tests := []struct {
		name  string
		snap  Snapshot
		runs  func(t *testing.T) map[string]Receipt
		calls []string
		check func(t *testing.T, f *fakeLab)
	}{
		{name: "fresh study queues euler", snap: openRoot(),
			calls: []string{"status", "run", "note"},
			check: func(t *testing.T, f *fakeLab) {
				var r runRequest
				f.request(t, "run", 0, &r)
				want := []string{"--method", "euler", "--e", "0.5", "--orbits", "10", "--steps-per-orbit", "1000", "--out", "euler.json"}
				if !slices.Equal(r.Args, want) || r.Source != SourceName || r.Key != "" || r.Commitment != "" {
					t.Fatalf("run request %+v", r)
				}
			}},
		{name: "queued euler waits without a note", snap: func() Snapshot {
			s := openRoot()
			s.Experiments = []Receipt{{ID: "exp_q", Status: statusQueued}}
			return s
		}(),
			runs: func(t *testing.T) map[string]Receipt {
				return map[string]Receipt{"euler@0.5|": {ID: "exp_q", Status: statusQueued}}
			},
			calls: []string{"status", "run"}},
		{name: "succeeded euler requests falsified review", snap: openRoot(),
			runs: func(t *testing.T) map[string]Receipt {
				return map[string]Receipt{"euler@0.5|": writeReceipt(t, "exp_e", euler)}
			},
			calls: []string{"status", "run", "review", "note"},
			check: func(t *testing.T, f *fakeLab) {
				var r reviewRequest
				f.request(t, "review", 0, &r)
				if r.Claim != rootClaim || r.Disposition != dispFalsified || !slices.Equal(r.Experiments, []string{"exp_e"}) ||
					!strings.Contains(r.Conclusion, "0.58187") || r.Challenge != nil {
					t.Fatalf("review request %+v", r)
				}
			}},
		{name: "failed euler is replicated", snap: openRoot(),
			runs: func(t *testing.T) map[string]Receipt {
				return map[string]Receipt{"euler@0.5|": {ID: "exp_f", Status: "failed"}, "euler@0.5|retry-1": {ID: "exp_i", Status: "interrupted"}}
			},
			calls: []string{"status", "run", "run", "run", "note"},
			check: func(t *testing.T, f *fakeLab) {
				var r runRequest
				f.request(t, "run", 2, &r)
				if r.Key != "retry-2" {
					t.Fatalf("third attempt key %q, want retry-2", r.Key)
				}
			}},
		{name: "pending review waits", snap: func() Snapshot {
			s := openRoot()
			s.Reviews = []ReviewRequest{{ID: "rev_1", Claim: rootClaim, Status: reviewQueued}}
			return s
		}(), calls: []string{"status"}},
		{name: "needs_revision replicates and re-requests", snap: refused(openRoot(), rootClaim),
			runs: func(t *testing.T) map[string]Receipt {
				return map[string]Receipt{"euler@0.5|revision-1": writeReceipt(t, "exp_r", euler)}
			},
			calls: []string{"status", "run", "review", "note"},
			check: func(t *testing.T, f *fakeLab) {
				var run runRequest
				f.request(t, "run", 0, &run)
				var r reviewRequest
				f.request(t, "review", 0, &r)
				if run.Key != "revision-1" || !slices.Equal(r.Experiments, []string{"exp_r"}) || !strings.Contains(r.Conclusion, "rev_2") {
					t.Fatalf("run %+v review %+v", run, r)
				}
			}},
		{name: "falsified root commits repair and queues both runs", snap: falsifiedRoot(),
			calls: []string{"status", "commit", "run", "run", "note"},
			check: func(t *testing.T, f *fakeLab) {
				var c commitRequest
				f.request(t, "commit", 0, &c)
				if c.Parent != rootClaim || c.Acceptance != "max_rel_energy_error <= 0.01" || len(c.Cases) != 2 {
					t.Fatalf("commit %+v", c)
				}
				var ev, ch runRequest
				f.request(t, "run", 0, &ev)
				f.request(t, "run", 1, &ch)
				if ev.Commitment != "c1" || ch.Commitment != "c1" || ev.Args[1] != "leapfrog" ||
					!slices.Equal(ch.Args[2:6], []string{"--e", "0.8", "--orbits", "100"}) {
					t.Fatalf("evidence %+v challenge %+v", ev, ch)
				}
			}},
		{name: "repair waits for its challenge", snap: withRepair(falsifiedRoot()),
			runs: func(t *testing.T) map[string]Receipt {
				return map[string]Receipt{"leapfrog@0.5|": writeReceipt(t, "exp_l", leap)}
			},
			calls: []string{"status", "run", "run", "note"}},
		{name: "both repair runs succeeded", snap: withRepair(falsifiedRoot()),
			runs: func(t *testing.T) map[string]Receipt {
				return map[string]Receipt{"leapfrog@0.5|": writeReceipt(t, "exp_l", leap), "leapfrog@0.8|": writeReceipt(t, "exp_c", hard)}
			},
			calls: []string{"status", "run", "run", "review", "note"},
			check: func(t *testing.T, f *fakeLab) {
				var r reviewRequest
				f.request(t, "review", 0, &r)
				if r.Claim != "c1" || r.Disposition != dispSupported || r.Challenge == nil ||
					!slices.Equal(r.Challenge.Experiments, []string{"exp_c"}) || !strings.Contains(r.Challenge.Outcome, "0.005673") {
					t.Fatalf("review request %+v", r)
				}
			}},
		{name: "failing challenge is not claimed", snap: withRepair(falsifiedRoot()),
			runs: func(t *testing.T) map[string]Receipt {
				return map[string]Receipt{"leapfrog@0.5|": writeReceipt(t, "exp_l", leap),
					"leapfrog@0.8|": writeReceipt(t, "exp_c", fakeRun{"leapfrog", 0.8, 100, 1000, 0.02})}
			},
			calls: []string{"status", "run", "run", "note"}},
		{name: "supported root is left alone", snap: func() Snapshot {
			s := openRoot()
			s.Claims[0].Status = dispSupported
			return s
		}(), calls: []string{"status"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeLab{snap: tc.snap, runs: map[string]Receipt{}}
			if tc.runs != nil {
				f.runs = tc.runs(t)
			}
			dir := t.TempDir()
			var log bytes.Buffer
			w := &Worker{Lab: f, Dir: dir, Turn: "3", Log: &log}
			if err := w.Run(context.Background()); err != nil {
				t.Fatalf("Run: %v\nlog:\n%s", err, log.String())
			}
			if !slices.Equal(f.names(), tc.calls) {
				t.Fatalf("calls = %v, want %v\nlog:\n%s", f.names(), tc.calls, log.String())
			}
			if _, err := os.Stat(filepath.Join(dir, SourceName)); err != nil {
				t.Fatalf("kepler.py not written: %v", err)
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}

func TestWorkerStopsAndNotesOnce(t *testing.T) {
	t.Parallel()
	failed := map[string]Receipt{}
	for i, key := range []string{"", "retry-1", "retry-2", "retry-3"} {
		failed["euler@0.5|"+key] = Receipt{ID: fmt.Sprintf("exp_%d", i), Status: "failed"}
	}
	snap := openRoot()
	for _, rc := range failed {
		snap.Experiments = append(snap.Experiments, rc)
	}
	dir := t.TempDir()
	f := &fakeLab{snap: snap, runs: failed}
	for turn, want := range [][]string{
		{"status", "run", "run", "run", "run", "note"},
		{"status", "run", "run", "run", "run"},
	} {
		f.calls = nil
		w := &Worker{Lab: f, Dir: dir}
		if err := w.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.names(), want) {
			t.Fatalf("turn %d: calls %v, want %v", turn, f.names(), want)
		}
	}
	var note map[string]string
	f.calls = nil
	f.snap.Experiments = nil
	if err := (&Worker{Lab: f, Dir: dir}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.request(t, "note", 0, &note)
	if !strings.Contains(note["statement"], "failed 4 times") {
		t.Fatalf("note %q", note["statement"])
	}
}

func TestWorkerKeepsExistingSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	own := []byte("print('mine')\n")
	if err := os.WriteFile(filepath.Join(dir, SourceName), own, 0o644); err != nil {
		t.Fatal(err)
	}
	s := openRoot()
	s.Claims[0].Status = dispSupported
	if err := (&Worker{Lab: &fakeLab{snap: s}, Dir: dir}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, SourceName))
	if err != nil || !bytes.Equal(got, own) {
		t.Fatalf("kepler.py overwritten: %q, %v", got, err)
	}
}

func TestWorkerReportsLabErrors(t *testing.T) {
	t.Parallel()
	w := &Worker{Lab: refusingLab{}, Dir: t.TempDir()}
	if err := w.Run(context.Background()); !errors.Is(err, ErrLab) {
		t.Fatalf("err = %v, want ErrLab", err)
	}
}

// refusingLab refuses every call.
type refusingLab struct{}

// Call implements Lab.
func (refusingLab) Call(context.Context, string, any, any) error { return ErrLab }
