package scripted

import (
	"fmt"
	"strings"
)

// advanceClaim takes the next step on one open claim: answer a refused
// review, run what is missing, or request the review the measurements imply.
func (t *turn) advanceClaim(p claimPlan) error {
	prefix, revision, wait := t.reviewState(p.ClaimID)
	if wait {
		return nil
	}
	ev, ok, err := t.obtain(p.Evidence, p.Commitment, prefix)
	if err != nil || (!ok && !p.Eager) {
		return err
	}
	var ch Receipt
	var chOK bool
	if p.Eager {
		if ch, chOK, err = t.obtain(p.Challenge, p.Commitment, prefix); err != nil || !ok {
			return err
		}
	}
	evM, ok := t.measure(ev)
	if !ok {
		return nil
	}
	if !t.crit.Satisfied(evM.Value) {
		return t.requestReview(p.ClaimID, dispFalsified, revision, []Receipt{ev}, nil, evM)
	}
	if !p.Eager {
		if ch, chOK, err = t.obtain(p.Challenge, p.Commitment, prefix); err != nil {
			return err
		}
	}
	if !chOK {
		return nil
	}
	chM, ok := t.measure(ch)
	if !ok {
		return nil
	}
	if !t.crit.Satisfied(chM.Value) {
		t.stop("challenge %s %s does not meet %s; not requesting support", ch.ID, chM.label(t.crit.Metric), t.crit)
		return nil
	}
	return t.requestReview(p.ClaimID, dispSupported, revision, []Receipt{ev, ch}, &p, evM, chM)
}

// reviewState looks at the claim's reviews: wait while one is pending or
// approved; after a refusal return the key prefix of the next replicates and
// the refused review.
func (t *turn) reviewState(claimID string) (prefix string, revision *ReviewRequest, wait bool) {
	reviews := t.snap.reviewsOf(claimID)
	if len(reviews) == 0 {
		return "", nil, false
	}
	last := reviews[len(reviews)-1]
	switch {
	case last.Verdict == nil || last.Status == reviewQueued:
		t.w.logf("review %s of %s is %s; waiting", last.ID, claimID, last.Status)
		return "", nil, true
	case last.Verdict.Decision == decisionApproved:
		t.w.logf("review %s of %s approved; waiting for the host", last.ID, claimID)
		return "", nil, true
	}
	refused := 0
	for _, r := range reviews {
		if r.Verdict != nil && r.Verdict.Decision == decisionNeedsRevision {
			refused++
		}
	}
	if refused > maxRevisions {
		t.stop("claim %s was sent back %d times (last: %s); not requesting again", claimID, refused, strings.Join(last.Verdict.EvidenceGaps, "; "))
		return "", nil, true
	}
	t.w.logf("review %s of %s needs revision: gaps %q, next test %v", last.ID, claimID, last.Verdict.EvidenceGaps, last.Verdict.NextTest)
	return fmt.Sprintf("revision-%d", refused), &last, false
}

// obtain requests a run (idempotent) and, while attempts fail, deliberate
// replicates keyed retry-N. ok is true once a run has succeeded.
func (t *turn) obtain(spec runSpec, commitment, prefix string) (Receipt, bool, error) {
	for attempt := 0; attempt <= maxRetries; attempt++ {
		key := replicateKey(prefix, attempt)
		var rc Receipt
		if err := t.w.Lab.Call(t.ctx, "run", spec.request(commitment, key), &rc); err != nil {
			return Receipt{}, false, fmt.Errorf("run %s: %w", spec.Label, err)
		}
		if !t.snap.hasExperiment(rc.ID) {
			t.snap.Experiments = append(t.snap.Experiments, rc)
			t.act("queued %s %s (%s%s)", spec.Label, rc.ID, spec.describe(), keyNote(key))
		}
		switch {
		case rc.Status == statusSucceeded:
			return rc, true, nil
		case pending(rc.Status):
			t.w.logf("%s %s is %s; waiting", spec.Label, rc.ID, rc.Status)
			return rc, false, nil
		}
		t.w.logf("%s %s ended %s; replicating", spec.Label, rc.ID, rc.Status)
	}
	t.stop("%s failed %d times; not replicating again", spec.Label, maxRetries+1)
	return Receipt{}, false, nil
}

// replicateKey names the attempt-th replicate under a key prefix.
func replicateKey(prefix string, attempt int) string {
	switch {
	case attempt == 0:
		return prefix
	case prefix == "":
		return fmt.Sprintf("retry-%d", attempt)
	default:
		return fmt.Sprintf("%s-retry-%d", prefix, attempt)
	}
}

// keyNote renders a replicate key for notes.
func keyNote(key string) string {
	if key == "" {
		return ""
	}
	return ", key " + key
}

// measure reads the metric from a succeeded run's artifacts.
func (t *turn) measure(r Receipt) (measurement, bool) {
	names := r.Outputs
	if len(r.Artifacts) > 0 {
		names = sortedKeys(r.Artifacts)
	}
	m, err := readMeasurement(r.ArtifactDir, names, t.crit.Metric)
	if err != nil {
		t.stop("cannot read %s from %s: %v", t.crit.Metric, r.ID, err)
		return measurement{}, false
	}
	return m, true
}

// requestReview asks for the disposition the measurements imply.
func (t *turn) requestReview(claimID, disposition string, revision *ReviewRequest, runs []Receipt, p *claimPlan, ms ...measurement) error {
	req := reviewRequest{Claim: claimID, Disposition: disposition}
	var quoted []string
	for i, r := range runs {
		req.Experiments = append(req.Experiments, r.ID)
		quoted = append(quoted, r.ID+" "+ms[i].label(t.crit.Metric))
	}
	verb := map[string]string{dispFalsified: "breaks", dispSupported: "meets"}[disposition]
	req.Conclusion = fmt.Sprintf("Measured %s; the stated case %s the criterion %s, so the claim is %s.",
		strings.Join(quoted, "; "), verb, t.crit, disposition)
	if revision != nil {
		req.Conclusion += fmt.Sprintf(" Revision after %s (gaps: %s): the runs were repeated as replicates.",
			revision.ID, strings.Join(revision.Verdict.EvidenceGaps, "; "))
	}
	if disposition == dispSupported && p != nil {
		ch := runs[len(runs)-1]
		req.Challenge = &challengeRequest{
			Strategy:    "repeat the measurement at a harder case: " + p.Challenge.describe(),
			Experiments: []string{ch.ID},
			Outcome:     fmt.Sprintf("%s %s, within %s", ch.ID, ms[len(ms)-1].label(t.crit.Metric), t.crit),
		}
	}
	var out ReviewRequest
	if err := t.w.Lab.Call(t.ctx, "review", req, &out); err != nil {
		return fmt.Errorf("request review of %s: %w", claimID, err)
	}
	t.act("requested review %s of %s as %s (%s)", out.ID, claimID, disposition, strings.Join(quoted, "; "))
	return nil
}
