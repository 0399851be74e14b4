package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/simjecture/simjecture/engine"
)

// The story fixtures: the demo as it ends, a study of 40 experiments with
// three running, and the cooperative study with its warning shown.

const demoRepair = "claim_5c1e0a9d2b7f"

// demoFixture is the bundled demo after its run: Euler falsified, the
// leapfrog repair supported, each by an evidence run and a challenge.
func demoFixture() *fakeEngine {
	root, repair := engine.RootClaim, demoRepair
	at := func(min int) time.Time { return t0.Add(time.Duration(min-15) * time.Minute) }
	exp := func(id, method, purpose, claim string, wall float64, min int) engine.Receipt {
		return engine.Receipt{ID: id, Status: engine.ExpSucceeded, IsolationBackend: "bubblewrap", Source: "kepler.py",
			Args: []string{"--method", method}, Stage: "evidence", Purpose: purpose, Commitment: claim,
			WallSeconds: ptr(wall), PeakRSSBytes: ptr(int64(18 << 20)), CreatedAt: at(min)}
	}
	snap := engine.Snapshot{
		StudyHeader: engine.StudyHeader{
			StudyID: "study_demo", Status: engine.StatusCompleted, Activity: "completed: every claim is resolved", Mode: "minimal",
			AgentBackend: "scripted", ExecutionBackend: "bubblewrap", CompletionPolicy: "repair",
			Campaign: "/work/studies/demo-20260102-024905", CreatedAt: at(0), Deadline: at(15), Turn: 6,
		},
		Claims: []engine.Claim{
			{ID: root, Status: "falsified", CreatedAt: at(0), Statement: "Explicit (forward) Euler conserves the total energy of an " +
				"eccentric Kepler orbit (e = 0.5) to within 1 % over 10 orbits at 1000 steps per orbit."},
			{ID: repair, Parent: &root, Status: "supported", CreatedAt: at(5), Statement: "A symplectic integrator (leapfrog / velocity " +
				"Verlet) conserves the total energy of the same Kepler orbit (e = 0.5) to within 1 % over 10 orbits at 1000 steps per orbit."},
		},
		Experiments: []engine.Receipt{
			exp("exp_0a11c9e4d2f35b7a8c6e1d90", "euler", "measure the energy error of forward Euler at the stated case", root, 0.41, 1),
			exp("exp_1b22d0f5e3a46c8b9d7f2ea1", "euler", "challenge: forward Euler, a harder case than stated", root, 0.83, 2),
			exp("exp_2c33e106f4b57d9cae803fb2", "leapfrog", "measure the energy error of leapfrog at the stated case", repair, 0.44, 6),
			exp("exp_3d44f217a5c68eadbf9140c3", "leapfrog", "challenge: leapfrog, higher eccentricity and ten times the orbits", repair, 4.1, 7),
		},
		ExperimentCounts: map[engine.ExpStatus]int{engine.ExpSucceeded: 4},
		Reviews: []engine.Review{
			{ID: "rev_8e1f0c2d3b4a5968", Claim: root, Disposition: "falsified", Status: "resolved", Attempts: 1,
				Conclusion:  "Forward Euler's energy error reaches 58 % of E0, far beyond 1 %.",
				Experiments: []string{"exp_0a11c9e4d2f35b7a8c6e1d90", "exp_1b22d0f5e3a46c8b9d7f2ea1"},
				Verdict: &engine.Verdict{Decision: "approved", Disposition: "falsified",
					Rationale:    "max_rel_energy_error = 0.58 at the stated case exceeds the 1 % threshold; the challenge agrees.",
					EvidenceGaps: []string{}}},
			{ID: "rev_9f20d13e4c5b6a79", Claim: repair, Disposition: "supported", Status: "resolved", Attempts: 1,
				Conclusion:  "Leapfrog's energy error stays below 1e-4 of E0, also at e = 0.9.",
				Experiments: []string{"exp_2c33e106f4b57d9cae803fb2", "exp_3d44f217a5c68eadbf9140c3"},
				Verdict: &engine.Verdict{Decision: "approved", Disposition: "supported",
					Rationale:    "max_rel_energy_error = 6.1e-05 at the stated case and 3.2e-04 in the challenge, both within 1 %.",
					EvidenceGaps: []string{}, NextTest: ptr("an eccentricity of 0.99 at the same steps per orbit")}},
		},
	}
	f := &fakeEngine{state: StudyState{Snapshot: snap}, evidence: map[string][]engine.Evidence{
		"rev_8e1f0c2d3b4a5968": {
			keplerEvidence("exp_0a11c9e4d2f35b7a8c6e1d90", "euler", "0.5", "10", "0.5812"),
			keplerEvidence("exp_1b22d0f5e3a46c8b9d7f2ea1", "euler", "0.7", "20", "0.9415"),
		},
		"rev_9f20d13e4c5b6a79": {
			keplerEvidence("exp_2c33e106f4b57d9cae803fb2", "leapfrog", "0.5", "10", "6.1e-05"),
			keplerEvidence("exp_3d44f217a5c68eadbf9140c3", "leapfrog", "0.9", "100", "0.00032"),
		},
	}}
	f.history = demoEvents(snap)
	return f
}

// keplerEvidence is what kepler.py's result.json says, as the engine reads it.
func keplerEvidence(id, method, e, orbits, maxErr string) engine.Evidence {
	m := func(k, v string) engine.Measured { return engine.Measured{Artifact: "result.json", Field: k, Value: v} }
	return engine.Evidence{Experiment: id, Status: engine.ExpSucceeded, Purpose: "measure the energy error of " + method,
		Values: []engine.Measured{m("method", method), m("eccentricity", e), m("orbits", orbits), m("max_rel_energy_error", maxErr)}}
}

// demoEvents is the demo's event log, oldest first, records included.
func demoEvents(s engine.Snapshot) []engine.Event {
	var evs []engine.Event
	add := func(typ engine.EventType, p any) {
		evs = append(evs, event(int64(len(evs)+1), typ, p))
		evs = append(evs, event(int64(len(evs)+1), engine.EvRecord, engine.RecordPayload{Kind: "claims", ID: "root"}))
	}
	add(engine.EvStudyCreated, engine.StudyCreatedPayload{Contract: engine.Contract{AgentBackend: "scripted", ExecutionBackend: "bubblewrap", CompletionPolicy: "repair"}})
	for i, e := range s.Experiments {
		add(engine.EvTurnStarted, engine.TurnStartedPayload{Role: "worker", Turn: i + 1})
		add(engine.EvExperimentQueued, engine.ExperimentQueuedPayload{Experiment: e.ID, Source: e.Source, Args: e.Args})
		if e.Status != engine.ExpQueued {
			add(engine.EvExperimentStarted, engine.ExperimentStartedPayload{Experiment: e.ID, Backend: e.IsolationBackend})
		}
		if e.WallSeconds != nil {
			add(engine.EvExperimentFinished, engine.ExperimentFinishedPayload{Experiment: e.ID, Status: e.Status, WallSeconds: e.WallSeconds})
		}
		if i == 1 {
			add(engine.EvNoteAdded, engine.NoteAddedPayload{Note: engine.Note{Statement: "Euler's error grows every orbit: not a step-size problem."}})
			add(engine.EvReviewQueued, engine.ReviewQueuedPayload{Claim: engine.RootClaim, Disposition: "falsified", Review: s.Reviews[0].ID})
			add(engine.EvReviewResolved, engine.ReviewResolvedPayload{Claim: engine.RootClaim, Decision: "approved", Disposition: "falsified", Review: s.Reviews[0].ID})
			add(engine.EvClaimStatus, engine.ClaimStatusPayload{Claim: engine.RootClaim, Status: "falsified"})
			add(engine.EvClaimCommitted, engine.ClaimCommittedPayload{Claim: demoRepair, Parent: engine.RootClaim, Statement: s.Claims[1].Statement})
		}
	}
	if s.Status != engine.StatusCompleted {
		add(engine.EvProviderReconnectScheduled, engine.ProviderReconnectScheduledPayload{Attempt: 2, DelaySeconds: 4, Error: "HTTP 503"})
		return evs
	}
	add(engine.EvReviewResolved, engine.ReviewResolvedPayload{Claim: demoRepair, Decision: "approved", Disposition: "supported", Review: s.Reviews[1].ID})
	add(engine.EvClaimStatus, engine.ClaimStatusPayload{Claim: demoRepair, Status: "supported"})
	add(engine.EvStudyState, engine.StudyStatePayload{Status: engine.StatusCompleted, Activity: "completed: every claim is resolved"})
	return evs
}

// manyFixture is a running study of 40 experiments: 30 succeeded, 5
// failed, 2 queued and 3 running (the newest), under three claims.
func manyFixture() *fakeEngine {
	f := demoFixture()
	s := &f.state.Snapshot
	s.Status, s.Activity, s.Deadline = engine.StatusRunning, "worker turn 41", t0.Add(40*time.Minute)
	s.Claims[1].Status = "open"
	s.Reviews = s.Reviews[:1]
	s.Experiments = nil
	counts := map[engine.ExpStatus]int{}
	for i := range 40 {
		st := engine.ExpSucceeded
		switch {
		case i >= 37:
			st = engine.ExpRunning
		case i >= 35:
			st = engine.ExpQueued
		case i%7 == 3:
			st = engine.ExpFailed
		}
		counts[st]++
		claim := []string{engine.RootClaim, demoRepair}[min(1, i/10)]
		r := engine.Receipt{ID: fmt.Sprintf("exp_%02d%022x", i, i*7919), Status: st, IsolationBackend: "bubblewrap", Source: "kepler.py",
			Purpose: fmt.Sprintf("leapfrog at %d steps per orbit", 100*(i+1)), Commitment: claim, Stage: "evidence"}
		switch st {
		case engine.ExpRunning:
			r.StartedAt = ptr(t0.Add(-time.Duration(40-i) * 10 * time.Second))
		case engine.ExpQueued:
			r.IsolationBackend = ""
		default:
			r.WallSeconds, r.PeakRSSBytes = ptr(0.3+float64(i)/10), ptr(int64(16+i)<<20)
		}
		s.Experiments = append(s.Experiments, r)
	}
	s.ExperimentCounts = counts
	f.state.Supervising = true
	f.history = demoEvents(*s)
	return f
}

// storyFixture is the cooperative study of fixture(), with the story's
// commitments and the review's experiments.
func storyFixture() *fakeEngine {
	f := fixture()
	s := &f.state.Snapshot
	s.Experiments[0].Commitment, s.Experiments[0].Purpose = engine.RootClaim, "measure the energy error of forward Euler"
	s.Experiments[1].Commitment, s.Experiments[1].Purpose = "claim_24b0e25f8d33", "measure the energy error of leapfrog"
	s.Reviews[0].Experiments = []string{s.Experiments[0].ID}
	s.ExperimentCounts = map[engine.ExpStatus]int{engine.ExpSucceeded: 1, engine.ExpRunning: 1, engine.ExpQueued: 1}
	f.history = demoEvents(*s)
	return f
}

// openStory opens f's dashboard with the newest followBack events of its
// history delivered, as the follower does.
func openStory(t *testing.T, f *fakeEngine, w, h int) Model {
	t.Helper()
	m := NewModel(context.Background(), newCommon(f, false), Start{Study: f, Now: t0})
	m, _ = step(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = feed(t, m, m.Init())
	m, _ = step(t, m, tickMsg{gen: m.dash.gen, now: t0})
	m, _ = step(t, m, eventsMsg{gen: m.dash.gen, events: f.history[max(0, len(f.history)-followBack):]})
	return feed(t, m, m.dash.refreshCmd())
}
