package scripted

import (
	"fmt"
	"slices"
	"strings"
)

// judgeFalsified approves when a run at the stated case breaks the criterion
// and no run at the stated case meets it.
func (rv *review) judgeFalsified() {
	var breaking, meeting []string
	for _, f := range append(append([]runFacts(nil), rv.evidence...), rv.challenge...) {
		if f.meas == nil || !rv.atStatedCase(*f.meas) {
			continue
		}
		if rv.crit.Satisfied(f.meas.Value) {
			meeting = append(meeting, f.receipt.ID)
		} else {
			breaking = append(breaking, f.receipt.ID)
		}
	}
	switch {
	case len(breaking) == 0:
		rv.gap(fmt.Sprintf("no submitted run at the stated case (%s) shows %s beyond the threshold %s",
			rv.describeStated(), rv.metric(), formatNum(rv.crit.Threshold)),
			fmt.Sprintf("run the stated case (%s) and submit it; if %s holds there, request supported instead",
				rv.describeStated(), rv.crit.String()))
	case len(meeting) > 0:
		rv.gap(fmt.Sprintf("runs at the stated case disagree: %s break the criterion, %s meet it",
			strings.Join(breaking, ", "), strings.Join(meeting, ", ")),
			"run a further replicate of the stated case to resolve the disagreement")
	}
}

// judgeSupported approves when every run meets the criterion, one of them at
// the stated case, and a challenge at a harder case also meets it.
func (rv *review) judgeSupported() {
	all := append(append([]runFacts(nil), rv.evidence...), rv.challenge...)
	for _, f := range all {
		rv.requireMeeting(f)
	}
	if !rv.anyAtStatedCase(rv.evidence) {
		rv.gap(fmt.Sprintf("no evidence run at the stated case (%s) was submitted", rv.describeStated()),
			fmt.Sprintf("run the stated case (%s) and submit it as evidence", rv.describeStated()))
	}
	c := rv.p.Challenge
	if c == nil || strings.TrimSpace(c.Strategy) == "" || len(rv.challenge) == 0 {
		rv.gap("a supported request needs a challenge: a strategy and at least one challenge experiment",
			"run the claim's method at a harder case (higher eccentricity or more orbits) and submit it as the challenge")
		return
	}
	for _, f := range rv.challenge {
		if f.meas != nil && !rv.harder(*f.meas) {
			rv.gap(fmt.Sprintf("challenge %s %s is not harder than the stated case (%s)",
				f.receipt.ID, f.meas.label(rv.metric()), rv.describeStated()),
				"choose a challenge with the same method and a harder case: higher eccentricity, more orbits or fewer steps per orbit")
		}
	}
}

// requireMeeting records a gap unless a run has a measurement that meets the criterion.
func (rv *review) requireMeeting(f runFacts) {
	switch {
	case f.problem != "" && f.meas == nil:
		rv.gap(f.problem, fmt.Sprintf("submit runs whose JSON artifacts report %s", rv.metric()))
	case f.meas != nil && !rv.crit.Satisfied(f.meas.Value):
		rv.gap(fmt.Sprintf("%s %s does not meet %s", f.receipt.ID, f.meas.label(rv.metric()), rv.crit.String()),
			"the claim does not hold at this case: request falsified, or narrow the claim and commit a repair")
	}
}

// anyAtStatedCase reports whether one of the runs measured the stated case.
func (rv *review) anyAtStatedCase(runs []runFacts) bool {
	for _, f := range runs {
		if f.meas != nil && rv.atStatedCase(*f.meas) {
			return true
		}
	}
	return false
}

// atStatedCase reports whether a measurement used a stated method and the
// stated parameters (those the claim names).
func (rv *review) atStatedCase(m measurement) bool {
	s := rv.stated
	if len(s.Methods) > 0 && !slices.Contains(s.Methods, strings.ToLower(m.Method)) {
		return false
	}
	return sameParam(s.E, m.Case.E) && sameParam(s.Orbits, m.Case.Orbits) &&
		sameParam(s.StepsPerOrbit, m.Case.StepsPerOrbit)
}

// harder reports whether a measurement used a stated method at a case that is
// harder in at least one stated parameter and easier in none.
func (rv *review) harder(m measurement) bool {
	s := rv.stated
	if len(s.Methods) > 0 && !slices.Contains(s.Methods, strings.ToLower(m.Method)) {
		return false
	}
	more, less := compareParam(s.E, m.Case.E, 1)
	mo, lo := compareParam(s.Orbits, m.Case.Orbits, 1)
	ms, ls := compareParam(s.StepsPerOrbit, m.Case.StepsPerOrbit, -1)
	return (more || mo || ms) && !(less || lo || ls)
}

// compareParam reports whether the run is harder or easier than stated in one
// parameter; sign +1 means a larger value is harder. Unknown values are
// neither, except a stated value the run does not report, which is easier.
func compareParam(stated, run *float64, sign float64) (harder, easier bool) {
	switch {
	case stated == nil:
		return false, false
	case run == nil:
		return false, true
	case sameNum(*stated, *run):
		return false, false
	}
	d := (*run - *stated) * sign
	return d > 0, d < 0
}

// sameParam compares a stated parameter with a measured one; an unstated
// parameter matches anything, a stated one needs a reported equal value.
func sameParam(stated, run *float64) bool {
	if stated == nil {
		return true
	}
	return run != nil && sameNum(*stated, *run)
}

// describeStated renders the stated case for gaps and next tests.
func (rv *review) describeStated() string {
	s := rv.stated
	var parts []string
	if len(s.Methods) > 0 {
		parts = append(parts, "method "+strings.Join(s.Methods, "/"))
	}
	if s.E != nil {
		parts = append(parts, "e="+formatNum(*s.E))
	}
	if s.Orbits != nil {
		parts = append(parts, formatNum(*s.Orbits)+" orbits")
	}
	if s.StepsPerOrbit != nil {
		parts = append(parts, formatNum(*s.StepsPerOrbit)+" steps/orbit")
	}
	if len(parts) == 0 {
		return "as stated"
	}
	return strings.Join(parts, ", ")
}
