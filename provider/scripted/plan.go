package scripted

import (
	"fmt"
	"strconv"
)

// Defaults of the demo case, used where the hypothesis does not name them.
const (
	defaultMethod        = "euler"
	defaultEccentricity  = 0.5
	defaultOrbits        = 10
	defaultStepsPerOrbit = 1000
	runTimeoutSeconds    = 120
)

// The challenge case was chosen by measurement with kepler.py: leapfrog at
// 1000 steps per orbit keeps max_rel_energy_error at 1.07e-4 for e = 0.5,
// 5.67e-3 for e = 0.8 (bounded: the same over 10, 100 and 1000 orbits) and
// 1.88e-2 for e = 0.85. So e = 0.8 over ten times the orbits is ~50 times
// harder than the stated case and still honestly within 1 %.
const (
	challengeEccentricity = 0.8
	challengeOrbitFactor  = 10
)

// runSpec is one kepler.py run of the plan.
type runSpec struct {
	Label         string
	Method        string
	E             float64
	Orbits        float64
	StepsPerOrbit float64
	Out           string
	Purpose       string
}

// args is the kepler.py command line of the run.
func (r runSpec) args() []string {
	return []string{"--method", r.Method, "--e", num(r.E), "--orbits", num(r.Orbits),
		"--steps-per-orbit", num(r.StepsPerOrbit), "--out", r.Out}
}

// describe renders the run's case for conclusions.
func (r runSpec) describe() string {
	return fmt.Sprintf("%s at e=%s, %s orbits, %s steps/orbit", r.Method, num(r.E), num(r.Orbits), num(r.StepsPerOrbit))
}

// runRequest is the argument of `lab run`.
type runRequest struct {
	Source     string   `json:"source"`
	Args       []string `json:"args"`
	Outputs    []string `json:"outputs"`
	Timeout    int      `json:"timeout"`
	Key        string   `json:"key,omitempty"`
	Stage      string   `json:"stage"`
	Purpose    string   `json:"purpose"`
	Commitment string   `json:"commitment,omitempty"`
}

// request builds the `lab run` request of the spec.
func (r runSpec) request(commitment, key string) runRequest {
	return runRequest{Source: SourceName, Args: r.args(), Outputs: []string{r.Out},
		Timeout: runTimeoutSeconds, Key: key, Stage: "evidence", Purpose: r.Purpose, Commitment: commitment}
}

// claimPlan is how the worker tests one claim: an evidence run at the stated
// case and, for support, a challenge run at a harder case.
type claimPlan struct {
	ClaimID    string
	Commitment string
	Evidence   runSpec
	Challenge  runSpec
	// Eager starts the challenge together with the evidence run.
	Eager bool
}

// demoCase is the stated case of the root hypothesis with the demo defaults
// for whatever the text does not name.
func demoCase(statement string) runSpec {
	c := statedCase(statement)
	s := runSpec{Method: defaultMethod, E: defaultEccentricity, Orbits: defaultOrbits, StepsPerOrbit: defaultStepsPerOrbit}
	if len(c.Methods) > 0 {
		s.Method = c.Methods[0]
	}
	setIf(&s.E, c.E)
	setIf(&s.Orbits, c.Orbits)
	setIf(&s.StepsPerOrbit, c.StepsPerOrbit)
	return s
}

// setIf copies a parsed value when present.
func setIf(dst *float64, v *float64) {
	if v != nil {
		*dst = *v
	}
}

// challengeOf returns the harder case for a stated one.
func challengeOf(s runSpec) runSpec {
	c := s
	if c.E < challengeEccentricity {
		c.E = challengeEccentricity
	}
	c.Orbits = s.Orbits * challengeOrbitFactor
	return c
}

// rootPlan tests the hypothesis with the method it names.
func rootPlan(stated runSpec) claimPlan {
	ev := stated
	ev.Label, ev.Out = "root evidence", ev.Method+".json"
	ev.Purpose = fmt.Sprintf("measure the energy error of %s at the stated case", ev.describe())
	ch := challengeOf(stated)
	ch.Label, ch.Out = "root challenge", ch.Method+"_challenge.json"
	ch.Purpose = fmt.Sprintf("challenge: %s, a harder case than stated", ch.describe())
	return claimPlan{ClaimID: rootClaim, Evidence: ev, Challenge: ch}
}

// repairPlan tests the symplectic repair committed as claim id.
func repairPlan(id string, stated runSpec) claimPlan {
	ev := stated
	ev.Method, ev.Label, ev.Out = "leapfrog", "repair evidence", "leapfrog.json"
	ev.Purpose = fmt.Sprintf("measure the energy error of %s at the stated case", ev.describe())
	ch := challengeOf(ev)
	ch.Label, ch.Out = "repair challenge", "leapfrog_challenge.json"
	ch.Purpose = fmt.Sprintf("challenge: %s, higher eccentricity and ten times the orbits", ch.describe())
	return claimPlan{ClaimID: id, Commitment: id, Evidence: ev, Challenge: ch, Eager: true}
}

// commitRequest is the argument of `lab commit`.
type commitRequest struct {
	Statement  string     `json:"statement"`
	Parent     string     `json:"parent"`
	Acceptance string     `json:"acceptance"`
	Rationale  string     `json:"rationale"`
	Source     string     `json:"source"`
	Cases      [][]string `json:"cases"`
}

// repairCommit is the repair claim for a falsified root.
func repairCommit(stated runSpec, crit Criterion) commitRequest {
	p := repairPlan("", stated)
	return commitRequest{
		Statement: fmt.Sprintf("A symplectic integrator (leapfrog / velocity Verlet) conserves the total energy "+
			"of the same Kepler orbit (e = %s) to within %s over %s orbits at %s steps per orbit.",
			num(stated.E), percent(crit.Threshold), num(stated.Orbits), num(stated.StepsPerOrbit)),
		Parent:     rootClaim,
		Acceptance: crit.String(),
		Rationale: "Forward Euler is not symplectic: its energy error grows every orbit, which falsified root. " +
			"A symplectic integrator conserves a nearby shadow Hamiltonian, so its energy error stays bounded " +
			"instead of drifting; the claim is tested at the stated case and challenged at a harder one.",
		Source: SourceName,
		Cases:  [][]string{p.Evidence.args(), p.Challenge.args()},
	}
}

// reviewRequest is the argument of `lab review`.
type reviewRequest struct {
	Claim       string            `json:"claim"`
	Disposition string            `json:"disposition"`
	Conclusion  string            `json:"conclusion"`
	Experiments []string          `json:"experiments"`
	Challenge   *challengeRequest `json:"challenge,omitempty"`
}

// challengeRequest is the challenge of a `supported` review request.
type challengeRequest struct {
	Strategy    string   `json:"strategy"`
	Experiments []string `json:"experiments"`
	Outcome     string   `json:"outcome"`
}

// num renders a run parameter the way kepler.py's command line takes it.
func num(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
