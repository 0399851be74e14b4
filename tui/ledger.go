package tui

import (
	"fmt"
	"strings"

	"github.com/simjecture/simjecture/engine"
)

// This file is the claim ledger of the scientific modes (structured,
// frontier) as the dashboard shows it: each claim's kind and relation, its
// latest contract version and state, its links; the mode, role and
// assignment in the Study pane. A minimal study shows none of it.

// scientific is whether the study keeps the ledger (not minimal).
func (m dashModel) scientific() bool {
	return engine.ModeRole(m.state.Snapshot.Mode) != engine.RoleWorker
}

// kindShort is a claim kind in three letters, for the Claims pane.
var kindShort = map[engine.ClaimKind]string{
	engine.KindScientific: "sci", engine.KindInstrument: "ins",
	engine.KindDiagnostic: "dia", engine.KindControl: "ctl",
}

// kindRelation is `sci repairs`: the claim's kind, short, and how it
// stands to its parent (a root says nothing more).
func kindRelation(c engine.Claim) string {
	k := kindShort[c.Kind]
	if k == "" {
		k = string(c.Kind)
	}
	if k == "" {
		k = kindShort[engine.KindScientific] // the root of a study has no kind and is scientific
	}
	if c.Relation == "" || c.Relation == engine.RelRoot {
		return k
	}
	return k + " " + string(c.Relation)
}

// contractOf is the state of claim id's latest contract version.
func (m dashModel) contractOf(id string) (engine.ClaimContract, bool) {
	for _, k := range m.state.Snapshot.Contracts {
		if k.Claim == id {
			return k, true
		}
	}
	return engine.ClaimContract{}, false
}

// contractText is `v2 approved`, or `no contract`.
func (m dashModel) contractText(id string) string {
	if k, ok := m.contractOf(id); ok {
		return fmt.Sprintf("v%d %s", k.Version, k.State)
	}
	return "no contract"
}

// linksText is `2/3 links`: links that count, of all the claim's links.
func linksText(c engine.Claim) string {
	n := 0
	for _, l := range c.Links {
		if l.Counts {
			n++
		}
	}
	word := "links"
	if len(c.Links) == 1 {
		word = "link"
	}
	return fmt.Sprintf("%d/%d %s", n, len(c.Links), word)
}

// ledgerColumns is the two right columns of a claim row: the number of
// experiments (minimal) or of links (scientific modes), then the verdict.
func (m dashModel) ledgerColumns(c engine.Claim) (string, string) {
	if m.scientific() {
		return linksText(c), m.claimVerdict(c.ID)
	}
	return fmt.Sprintf("%d exp", m.claimExperiments(c.ID)), m.claimVerdict(c.ID)
}

// claimTag is what a claim row shows after the id, before the statement:
// in the scientific modes the latest contract and its state, then the
// kind and relation (`v1 approved · sci repairs: `), so that even a narrow
// pane, which drops the right columns first, keeps the contract state;
// nothing in minimal.
func (m dashModel) claimTag(c engine.Claim) string {
	if !m.scientific() {
		return ""
	}
	return m.contractText(c.ID) + " · " + kindRelation(c) + ": "
}

// roleText is `structured · falsifier on claim_ab12cd34ef56`, with the
// assignment's status when it has ended ("" in minimal).
func (m dashModel) roleText() string {
	s := m.state.Snapshot
	if !m.scientific() {
		return ""
	}
	out := s.Mode
	if s.Role != "" {
		out += " · " + string(s.Role)
	}
	if a := s.Assignment; a != nil {
		out += " on " + shortID(a.Claim)
		if a.Status != "" && a.Status != "active" {
			out += " (" + string(a.Status) + ")"
		}
	}
	return out
}

// ledgerDetail is what a claim's detail adds in the scientific modes:
// kind, relation, contract versions with their states, links with
// whether they count and why not.
func (m dashModel) ledgerDetail(c engine.Claim, w int) []string {
	if !m.scientific() {
		return nil
	}
	var out []string
	kv := func(k, v string) {
		if v != "" {
			out = append(out, wrap(fmt.Sprintf("%-11s %s", k, v), w)...)
		}
	}
	kind := string(c.Kind)
	if kind == "" {
		kind = string(engine.KindScientific)
	}
	kv("kind", kind)
	kv("relation", string(c.Relation))
	kv("closed", c.ClosedReason)
	if c.DecisiveVersion > 0 {
		kv("decisive", fmt.Sprintf("contract v%d", c.DecisiveVersion))
	}
	if r := c.Repair; r != nil {
		kv("repair", r.Accommodation)
		kv("changes", r.SemanticChange)
		kv("fails if", r.FalsificationCondition)
		kv("counterex.", strings.Join(r.Counterexamples, ", "))
	}
	out = append(out, m.contractLines(c, w)...)
	return append(out, linkLines(c, w)...)
}

// contractLines is every contract version, newest last; the latest has
// the state the engine derived, an earlier one is superseded.
func (m dashModel) contractLines(c engine.Claim, w int) []string {
	if len(c.Contracts) == 0 {
		return []string{"", "Contract: none registered"}
	}
	latest, _ := m.contractOf(c.ID)
	var out []string
	for _, k := range c.Contracts {
		state := "superseded"
		if k.Version == latest.Version && latest.State != "" {
			state = string(latest.State)
		}
		out = append(out, "", m.statusStyle(state).Render(fmt.Sprintf("Contract v%d: %s (%s)", k.Version, state, k.Purpose)))
		for _, f := range [][2]string{
			{"observable", k.Observable}, {"expected", k.ExpectedOutcomes}, {"rule", k.DecisionRule},
			{"required", k.RequiredObservation}, {"uncertainty", k.UncertaintyCriterion}, {"inconclusive", k.InconclusiveConditions},
		} {
			if f[1] != "" {
				out = append(out, wrap(fmt.Sprintf("  %-12s %s", f[0], oneLine(f[1])), w)...)
			}
		}
		for _, ch := range k.Checks {
			out = append(out, wrap(fmt.Sprintf("  %-12s %s %s = %v", "check", ch.Output, ch.Path, ch.Equals), w)...)
		}
		if b := k.Binding; b != nil {
			out = append(out, wrap(fmt.Sprintf("  %-12s %s (%d argument lists)", "binds", b.Source, len(b.Args)), w)...)
		}
	}
	return out
}

// linkLines is every evidence link: experiment, output, the contract
// version it was linked under, and whether it counts (else why not).
func linkLines(c engine.Claim, w int) []string {
	if len(c.Links) == 0 {
		return []string{"", "Links: none"}
	}
	out := []string{"", "Links: " + linksText(c) + " count"}
	for _, l := range c.Links {
		counts := "counts"
		if !l.Counts {
			counts = "does not count: " + strings.Join(l.Reasons, "; ")
		}
		out = append(out, wrap(fmt.Sprintf("  %s %s (v%d, sufficient %t) %s", shortID(l.Experiment), l.Output, l.ContractVersion, l.Sufficient, counts), w)...)
		if l.Note != "" {
			out = append(out, wrap("    note: "+oneLine(l.Note), w)...)
		}
	}
	return out
}

// reviewAsks is what a review asks: minimal's disposition, or the stage
// of a scientific review (`contract`, `support`).
func reviewAsks(r engine.Review) string {
	if r.Disposition == "" && r.Stage != "" {
		return string(r.Stage)
	}
	return r.Disposition
}
