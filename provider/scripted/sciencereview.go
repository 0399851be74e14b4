package scripted

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// This file is the scripted reviewer of the scientific modes: the contract
// review (is the bound test the operator's stated case and tolerance?) and
// the tool-free judge (do the packet's re-hashed excerpts meet the
// criterion?). Both read every figure from the packet.

// SciencePacket is the part of a scientific review packet the scripted reviewer reads.
type SciencePacket struct {
	Stage      string `json:"stage"`
	Hypothesis string `json:"hypothesis"`
	Contract   struct {
		Claim     string      `json:"claim"`
		Relation  string      `json:"relation"`
		Statement string      `json:"statement"`
		Ancestors []string    `json:"ancestors"`
		Contract  sciContract `json:"contract"`
		Sources   []struct {
			Path      string `json:"path"`
			ReadError string `json:"read_error"`
		} `json:"sources"`
	} `json:"contract_packet"`
	Evidence []struct {
		Excerpts map[string]string `json:"excerpts"`
	} `json:"evidence"`
}

// ScienceVerdict is the verdict of a scientific review (contract section 12).
type ScienceVerdict struct {
	ClaimID         string   `json:"claim_id"`
	ContractVersion int      `json:"contract_version"`
	Decision        string   `json:"decision"`
	Rationale       string   `json:"rationale"`
	EvidenceGaps    []string `json:"evidence_gaps"`
	NextTest        *string  `json:"next_test"`
}

// sciReviewer collects the gaps of one scientific review.
type sciReviewer struct {
	p     SciencePacket
	crit  Criterion
	case_ orbitCase
	gaps  []string
	facts []string
}

// ReviewScience judges a contract review or a support adjudication.
func ReviewScience(p SciencePacket) ScienceVerdict {
	rv := &sciReviewer{p: p, case_: statedCase(p.Contract.Statement, p.Contract.Ancestors...)}
	crit, err := ParseCriterion(p.Contract.Statement, p.Hypothesis)
	if err != nil {
		rv.gap("no tolerance can be read from the claim or the hypothesis: " + err.Error())
	}
	rv.crit = crit
	if p.Stage == "support" {
		rv.judge()
		return rv.verdict("sufficient", "insufficient")
	}
	rv.design()
	return rv.verdict("approved", "needs_revision")
}

func (rv *sciReviewer) gap(s string) { rv.gaps = append(rv.gaps, s) }

// design checks the bound test against the stated case and tolerance.
func (rv *sciReviewer) design() {
	k := rv.p.Contract.Contract
	if k.Binding == nil || len(k.Binding.Args) != 1 {
		rv.gap("the contract binds no single program and argument list")
		return
	}
	for _, s := range rv.p.Contract.Sources {
		if s.ReadError != "" {
			rv.gap("the bound source " + s.Path + " cannot be read")
		}
	}
	args := k.Binding.Args[0]
	rv.sameArg(args, "--tolerance", &rv.crit.Threshold, "the tolerance")
	rv.sameArg(args, "--e", rv.case_.E, "the eccentricity")
	rv.sameArg(args, "--orbits", rv.case_.Orbits, "the number of orbits")
	rv.sameArg(args, "--steps-per-orbit", rv.case_.StepsPerOrbit, "the steps per orbit")
	if m := statedMethods(rv.p.Contract.Statement); len(m) > 0 && argValue(args, "--method") != m[0] {
		rv.gap(fmt.Sprintf("the bound method %q is not the claim's %q", argValue(args, "--method"), m[0]))
	}
	if rv.p.Contract.Relation == "repairs" && !rv.harderChallenge(args) {
		rv.gap("a repair's support needs a challenge at a genuinely harder case (higher eccentricity and more orbits)")
	}
	if len(k.Checks) == 0 {
		rv.gap("the contract has no machine check")
	}
	for _, ch := range k.Checks {
		if ch.Output != argValue(args, "--out") {
			rv.gap("check on " + ch.Output + ", which the bound run does not write")
		}
	}
	rv.facts = append(rv.facts, fmt.Sprintf("binds %s %s", k.Binding.Source, strings.Join(args, " ")))
}

func (rv *sciReviewer) sameArg(args []string, flag string, want *float64, what string) {
	got, err := strconv.ParseFloat(argValue(args, flag), 64)
	switch {
	case want == nil:
	case err != nil:
		rv.gap(fmt.Sprintf("%s (%s) is missing from the bound arguments", what, flag))
	case !sameNum(got, *want):
		rv.gap(fmt.Sprintf("%s is %s, not the stated %s", what, num(got), num(*want)))
	}
}

func (rv *sciReviewer) harderChallenge(args []string) bool {
	e, err1 := strconv.ParseFloat(argValue(args, "--challenge-e"), 64)
	o, err2 := strconv.ParseFloat(argValue(args, "--challenge-orbits"), 64)
	se, so := defaultEccentricity, float64(defaultOrbits)
	setIf(&se, rv.case_.E)
	setIf(&so, rv.case_.Orbits)
	return err1 == nil && err2 == nil && e > se && o > so
}

// judge reads each excerpt's figures and compares them with the criterion.
func (rv *sciReviewer) judge() {
	n := 0
	for _, ev := range rv.p.Evidence {
		for name, text := range ev.Excerpts {
			var d checkDoc
			if err := json.Unmarshal([]byte(text), &d); err != nil || d.Stated == nil {
				rv.gap(name + " is not a whole energy check in the packet")
				continue
			}
			n++
			rv.judgeDoc(name, d)
		}
	}
	if n == 0 {
		rv.gap("the packet holds no measured evidence")
	}
}

func (rv *sciReviewer) judgeDoc(name string, d checkDoc) {
	s := d.Stated
	if rv.case_.E != nil && !sameNum(s.E, *rv.case_.E) || rv.case_.Orbits != nil && !sameNum(s.Orbits, *rv.case_.Orbits) {
		rv.gap(fmt.Sprintf("%s was measured at e = %g over %g orbits, not at the stated case", name, s.E, s.Orbits))
	}
	rv.meets(name+" (stated case)", s.MaxErr)
	if rv.p.Contract.Relation == "repairs" {
		if d.Challenge == nil {
			rv.gap(name + " has no challenge run")
			return
		}
		rv.meets(fmt.Sprintf("%s (challenge e = %g, %g orbits)", name, d.Challenge.E, d.Challenge.Orbits), d.Challenge.MaxErr)
	}
}

func (rv *sciReviewer) meets(what string, v float64) {
	if !rv.crit.Satisfied(v) {
		rv.gap(fmt.Sprintf("%s: max_rel_energy_error %g breaks %s", what, v, rv.crit))
		return
	}
	rv.facts = append(rv.facts, fmt.Sprintf("%s: max_rel_energy_error %g meets %s", what, v, rv.crit))
}

func (rv *sciReviewer) verdict(yes, no string) ScienceVerdict {
	v := ScienceVerdict{ClaimID: rv.p.Contract.Claim, ContractVersion: rv.p.Contract.Contract.Version, EvidenceGaps: []string{}}
	if len(rv.gaps) > 0 {
		next := rv.gaps[0]
		v.Decision, v.EvidenceGaps, v.NextTest = no, rv.gaps, &next
		v.Rationale = "The scripted reviewer found gaps: " + strings.Join(rv.gaps, "; ")
		return v
	}
	v.Decision = yes
	v.Rationale = "Read from the packet: " + strings.Join(rv.facts, "; ")
	if len(v.Rationale) < 16 {
		v.Rationale += " (no figure needed)"
	}
	return v
}
