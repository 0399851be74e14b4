package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/simjecture/simjecture/store"
)

// MaxCheckedOutput is the largest output a check reads.
const MaxCheckedOutput = 16 << 20

// LinkArgs are the arguments of lab link.
type LinkArgs struct {
	Claim      string `json:"claim"`
	Experiment string `json:"experiment"`
	Output     string `json:"output"`
	Sufficient bool   `json:"sufficient"`
	Note       string `json:"note"`
}

// Link records a finished run's output as evidence for a claim, bound to
// the claim's latest contract version, with whether it counts and why not.
// The same link twice returns the first.
func (l *Lab) Link(ctx context.Context, a LinkArgs) (Link, error) {
	var k Link
	err := l.write(ctx, func(tx *store.Tx) error {
		if err := l.requireLedger(tx, "link"); err != nil {
			return err
		}
		if _, err := l.assigned(tx, a.Claim); err != nil {
			return err
		}
		c, r, err := linkTargets(tx, a)
		if err != nil {
			return err
		}
		k = l.evaluateLink(c, r, a)
		if i := slices.IndexFunc(c.Links, func(x Link) bool { return sameLink(x, k) }); i >= 0 {
			k = c.Links[i]
			return nil
		}
		c.Links = append(c.Links, k)
		if err := putClaim(tx, c); err != nil {
			return err
		}
		return appendEvent(tx, EvidenceLinkedPayload{Claim: c.ID, ContractVersion: k.ContractVersion, Counts: k.Counts,
			Experiment: k.Experiment, Output: k.Output})
	})
	return k, err
}

func sameLink(a, b Link) bool {
	return a.Experiment == b.Experiment && a.Output == b.Output && a.Sufficient == b.Sufficient &&
		a.Note == b.Note && a.ContractVersion == b.ContractVersion
}

// linkTargets reads the open claim and the finished run a link names.
func linkTargets(tx *store.Tx, a LinkArgs) (Claim, Receipt, error) {
	c, err := getClaim(tx, a.Claim)
	if err != nil {
		return Claim{}, Receipt{}, err
	}
	if c.Status != string(LedgerOpen) {
		return Claim{}, Receipt{}, fmt.Errorf("%s is %s; only an open claim takes evidence: %w", c.ID, c.Status, ErrLab)
	}
	r, err := getReceipt(tx, a.Experiment)
	if err != nil {
		return Claim{}, Receipt{}, err
	}
	if !r.Finished() {
		return Claim{}, Receipt{}, fmt.Errorf("experiment %s is %s; link it once it has finished: %w", r.ID, r.Status, ErrLab)
	}
	if !slices.Contains(r.Outputs, filepath.ToSlash(filepath.Clean(a.Output))) {
		return Claim{}, Receipt{}, fmt.Errorf("%s is not a declared output of %s (%v): %w", a.Output, r.ID, r.Outputs, ErrLab)
	}
	return c, r, nil
}

// evaluateLink builds the link and says whether it counts.
func (l *Lab) evaluateLink(c Claim, r Receipt, a LinkArgs) Link {
	out := filepath.ToSlash(filepath.Clean(a.Output))
	k := Link{Experiment: r.ID, Output: out, Sufficient: a.Sufficient, Note: a.Note, Reasons: []string{}, CreatedAt: time.Now().UTC()}
	if v := c.latest(); v != nil {
		k.ContractVersion = v.Version
	}
	k.SHA256, _, _ = l.rehash(r, out) // the hash as read now; a failure is a reason below
	k.Reasons = l.linkReasons(c, r, k)
	k.Counts = len(k.Reasons) == 0
	return k
}

// linkReasons lists why a link does not count (contract section 12): it
// was not offered as sufficient, there is no contract, the run did not
// succeed, is no evidence run for this claim, was queued before the
// version it binds to, fails a check on its re-hashed output, or is not
// the bound program and arguments.
func (l *Lab) linkReasons(c Claim, r Receipt, k Link) []string {
	var why []string
	if !k.Sufficient {
		why = append(why, "not offered as sufficient")
	}
	if k.ContractVersion == 0 {
		return append(why, c.ID+" has no evidence contract")
	}
	v := c.Contracts[k.ContractVersion-1]
	if r.Status != ExpSucceeded {
		why = append(why, fmt.Sprintf("%s did not succeed (%s)", r.ID, r.Status))
	}
	if r.Stage != "evidence" {
		why = append(why, fmt.Sprintf("%s is a %s run, never evidence", r.ID, r.Stage))
	}
	if r.Claim != c.ID {
		why = append(why, fmt.Sprintf("%s was not run for %s", r.ID, c.ID))
	}
	if r.OpSeq <= v.OpSeq {
		why = append(why, fmt.Sprintf("%s was queued before contract version %d", r.ID, v.Version))
	}
	why = append(why, l.checkFailures(r, v)...)
	if b := v.Binding; b != nil && !bindingMatches(*b, r) {
		why = append(why, fmt.Sprintf("%s is not the bound program %s with one of its argument lists", r.ID, b.Source))
	}
	return why
}

func bindingMatches(b Binding, r Receipt) bool {
	if r.Source != b.Source {
		return false
	}
	return len(b.Args) == 0 || slices.ContainsFunc(b.Args, func(args []string) bool { return slices.Equal(args, r.Args) })
}

// checkFailures runs the contract's checks on the run's re-hashed outputs.
func (l *Lab) checkFailures(r Receipt, v EvidenceContract) []string {
	var why []string
	for i, ch := range v.Checks {
		if err := l.runCheck(r, ch); err != nil {
			why = append(why, fmt.Sprintf("check %d (%s %s): %v", i+1, ch.Output, ch.Path, err))
		}
	}
	return why
}

func (l *Lab) runCheck(r Receipt, ch Check) error {
	_, body, err := l.rehash(r, ch.Output)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("output is not JSON: %v", err)
	}
	p, err := ParseEvidencePath(ch.Path)
	if err != nil {
		return err
	}
	got, err := p.Lookup(doc)
	if err != nil {
		return err
	}
	if !got.Equal(ch.Equals) {
		return fmt.Errorf("found %s, expected %s", got, ch.Equals)
	}
	return nil
}

// rehash reads a collected output and checks it against its receipt.
func (l *Lab) rehash(r Receipt, rel string) (string, []byte, error) {
	art, ok := r.Artifacts[rel]
	if !ok {
		return "", nil, fmt.Errorf("%s was not collected", rel)
	}
	f, _, err := openUnder(l.C.ArtifactDir(r.ID), "output", rel)
	if err != nil {
		return "", nil, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, MaxCheckedOutput+1))
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("cannot read %s: %v", rel, err)
	case len(body) > MaxCheckedOutput:
		return "", nil, fmt.Errorf("%s is larger than %d bytes", rel, MaxCheckedOutput)
	}
	if sum := docHash(body); sum != art.SHA256 {
		return sum, nil, fmt.Errorf("%s changed after collection (sha256 %s, receipt %s)", rel, sum[:12], art.SHA256[:min(12, len(art.SHA256))])
	}
	return art.SHA256, body, nil
}
