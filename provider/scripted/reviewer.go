package scripted

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Packet is the review packet the host gives a reviewer (contract section 11).
type Packet struct {
	ClaimID      string           `json:"claim_id"`
	Statement    string           `json:"statement"`
	Disposition  string           `json:"disposition"`
	Conclusion   string           `json:"conclusion"`
	Hypothesis   string           `json:"hypothesis"`
	Instructions string           `json:"instructions"`
	Acceptance   string           `json:"acceptance"`
	Parent       json.RawMessage  `json:"parent"`
	Challenge    *PacketChallenge `json:"challenge"`
	Experiments  []Receipt        `json:"experiments"`
}

// PacketChallenge is the challenge of a `supported` review request. Its
// experiments may be ids or receipts; Receipts holds receipts a host adds.
type PacketChallenge struct {
	Strategy    string          `json:"strategy"`
	Experiments json.RawMessage `json:"experiments"`
	Outcome     string          `json:"outcome"`
	Receipts    []Receipt       `json:"receipts"`
}

// runFacts is one submitted run as the reviewer sees it.
type runFacts struct {
	receipt Receipt
	meas    *measurement
	problem string
}

// review holds the state of one judgement.
type review struct {
	p         Packet
	crit      Criterion
	critFrom  string
	stated    orbitCase
	evidence  []runFacts
	challenge []runFacts
	gaps      []string
	findings  []string
	nextTest  string
}

// Review judges a packet from the artifacts it names and returns the verdict.
func Review(p Packet) Verdict {
	rv := &review{p: p}
	rv.load()
	if rv.critFrom != "" {
		switch p.Disposition {
		case dispFalsified:
			rv.judgeFalsified()
		case dispSupported:
			rv.judgeSupported()
		default:
			rv.gap(fmt.Sprintf("disposition %q cannot be approved; request supported or falsified from the measurements", p.Disposition),
				"decide the disposition from the measured figures against "+rv.crit.String())
		}
	}
	return rv.verdict()
}

// load parses the criterion and stated case and checks every submitted run.
func (rv *review) load() {
	rv.loadCriterion()
	rv.stated = statedCase(rv.p.Statement, append(parentStatements(rv.p.Parent), rv.p.Hypothesis)...)
	ids, extra := rv.challengeRefs()
	for _, r := range append(append([]Receipt(nil), rv.p.Experiments...), extra...) {
		f := rv.check(r)
		if slices.Contains(ids, r.ID) {
			rv.challenge = appendUnique(rv.challenge, f)
		} else {
			rv.evidence = appendUnique(rv.evidence, f)
		}
	}
	for _, id := range ids {
		if !hasRun(rv.challenge, id) {
			rv.gap(fmt.Sprintf("challenge experiment %s is not among the submitted receipts", id),
				"submit the challenge experiment's receipt with the review request")
		}
	}
}

// loadCriterion picks the threshold: acceptance, then statement, hypothesis, instructions.
func (rv *review) loadCriterion() {
	sources := []struct{ name, text string }{
		{"acceptance", rv.p.Acceptance}, {"statement", rv.p.Statement},
		{"hypothesis", rv.p.Hypothesis}, {"instructions", rv.p.Instructions},
	}
	for _, s := range sources {
		if c, ok := parseCriterion(s.text); ok {
			rv.crit, rv.critFrom = c, s.name
			break
		}
	}
	if rv.critFrom == "" {
		rv.gap("no numerical acceptance threshold in the acceptance criterion, statement or hypothesis",
			"state the acceptance criterion as a comparison, e.g. max_rel_energy_error <= 0.01")
		return
	}
	if c, ok := parseCriterion(rv.p.Statement); ok && rv.critFrom == "acceptance" && !sameNum(c.Threshold, rv.crit.Threshold) {
		rv.gap(fmt.Sprintf("acceptance threshold %s disagrees with the statement's %s", formatNum(rv.crit.Threshold), formatNum(c.Threshold)),
			"commit an acceptance criterion that matches the statement")
	}
}

// check re-hashes a run's artifacts and reads its measurement.
func (rv *review) check(r Receipt) runFacts {
	f := runFacts{receipt: r}
	if r.Status != statusSucceeded {
		f.problem = fmt.Sprintf("%s has status %q, not succeeded", r.ID, r.Status)
		rv.gap(f.problem, "re-run the experiment as a deliberate replicate and submit a succeeded run")
		return f
	}
	if gaps := verifyArtifacts(r); len(gaps) > 0 {
		f.problem = gaps[0]
		for _, g := range gaps {
			rv.gap(g, "re-run the experiment as a replicate (new key) and resubmit; recorded artifacts must not change")
		}
		return f
	}
	m, err := readMeasurement(r.ArtifactDir, sortedKeys(r.Artifacts), rv.metric())
	if err != nil {
		f.problem = fmt.Sprintf("%s: no %s in its JSON artifacts", r.ID, rv.metric())
		return f
	}
	f.meas = &m
	rv.findings = append(rv.findings, r.ID+" "+m.label(rv.metric()))
	return f
}

// metric is the artifact field under test.
func (rv *review) metric() string {
	if rv.crit.Metric == "" {
		return DefaultMetric
	}
	return rv.crit.Metric
}

// challengeRefs returns the challenge's experiment ids and any receipts it carries.
func (rv *review) challengeRefs() ([]string, []Receipt) {
	c := rv.p.Challenge
	if c == nil {
		return nil, nil
	}
	var items []json.RawMessage
	_ = json.Unmarshal(c.Experiments, &items)
	ids := make([]string, 0, len(items)+len(c.Receipts))
	receipts := append([]Receipt(nil), c.Receipts...)
	for _, raw := range items {
		var id string
		if json.Unmarshal(raw, &id) == nil {
			ids = append(ids, id)
			continue
		}
		var r Receipt
		if json.Unmarshal(raw, &r) == nil && r.ID != "" {
			ids = append(ids, r.ID)
			receipts = append(receipts, r)
		}
	}
	for _, r := range c.Receipts {
		if !slices.Contains(ids, r.ID) {
			ids = append(ids, r.ID)
		}
	}
	return ids, receipts
}

// gap records an evidence gap and the test that would close it.
func (rv *review) gap(gap, next string) {
	if !slices.Contains(rv.gaps, gap) {
		rv.gaps = append(rv.gaps, gap)
	}
	if rv.nextTest == "" {
		rv.nextTest = next
	}
}

// verdict assembles the decision from the gaps and findings.
func (rv *review) verdict() Verdict {
	v := Verdict{ClaimID: rv.p.ClaimID, Disposition: rv.p.Disposition, EvidenceGaps: []string{}}
	if len(rv.gaps) == 0 && (rv.p.Disposition == dispFalsified || rv.p.Disposition == dispSupported) {
		v.Decision = decisionApproved
	} else {
		v.Decision = decisionNeedsRevision
		v.EvidenceGaps = append(v.EvidenceGaps, rv.gaps...)
		if len(v.EvidenceGaps) == 0 {
			v.EvidenceGaps = []string{"the request cannot be approved as submitted"}
		}
		v.NextTest = rv.nextTest
	}
	v.Rationale = rv.rationale(v.Decision)
	return v
}

// rationale quotes the criterion and every measured figure.
func (rv *review) rationale(decision string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Requested %q for claim %s. ", rv.p.Disposition, rv.p.ClaimID)
	if rv.critFrom != "" {
		fmt.Fprintf(&b, "Criterion %s (from the %s). ", rv.crit.String(), rv.critFrom)
	}
	if len(rv.findings) > 0 {
		fmt.Fprintf(&b, "Measured from re-hashed artifacts: %s. ", strings.Join(rv.findings, "; "))
	} else {
		b.WriteString("No measured figure could be read from the submitted artifacts. ")
	}
	if decision == decisionApproved {
		b.WriteString("The measurements establish the requested disposition.")
	} else {
		fmt.Fprintf(&b, "Not approved: %d evidence gap(s).", len(rv.gaps))
	}
	return b.String()
}

// appendUnique adds a run unless its id is already present.
func appendUnique(list []runFacts, f runFacts) []runFacts {
	if hasRun(list, f.receipt.ID) {
		return list
	}
	return append(list, f)
}

// hasRun reports whether list holds the run id.
func hasRun(list []runFacts, id string) bool {
	for _, f := range list {
		if f.receipt.ID == id {
			return true
		}
	}
	return false
}

// parentStatements collects every "statement" in the parent chain, nearest first.
func parentStatements(raw json.RawMessage) []string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	collectStatements(v, &out)
	return out
}

// collectStatements walks decoded JSON depth-first, keys in sorted order.
func collectStatements(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		if s, ok := t["statement"].(string); ok && s != "" {
			*out = append(*out, s)
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k != "statement" {
				collectStatements(t[k], out)
			}
		}
	case []any:
		for _, child := range t {
			collectStatements(child, out)
		}
	}
}
