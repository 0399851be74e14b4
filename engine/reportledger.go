package engine

import (
	"fmt"
	"strings"
)

// writeScience renders the claim ledger of the scientific modes in
// LEDGER.md: each claim's kind and relation, its contract versions and
// their state, its links with why they do not count, and the assignments
// with their handoffs. Minimal studies have none of it.
func writeScience(b *strings.Builder, s Snapshot) {
	if ModeRole(s.Mode) == RoleWorker {
		return
	}
	state := map[string]ContractState{}
	for _, c := range s.Contracts {
		state[c.Claim] = c.State
	}
	b.WriteString("\n## Claim ledger\n\n| claim | kind | relation | status | decisive | contracts | links |\n|---|---|---|---|---|---|---|\n")
	for _, c := range s.Claims {
		contracts := "—"
		if n := len(c.Contracts); n > 0 {
			contracts = fmt.Sprintf("v1–v%d, latest %s", n, state[c.ID])
		}
		decisive := "—"
		if c.DecisiveVersion > 0 {
			decisive = fmt.Sprintf("v%d", c.DecisiveVersion)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", c.ID, kindOf(c), relationOf(c), c.Status, decisive, contracts, cell(linkSummary(c.Links)))
	}
	if len(s.Assignments) == 0 {
		return
	}
	b.WriteString("\n## Assignments\n\n| id | role | claim | status | operations | handoff | next test |\n|---|---|---|---|---|---|---|\n")
	for _, a := range s.Assignments {
		outcome, next := "—", "—"
		if a.Handoff != nil {
			outcome, next = a.Handoff.Outcome, cell(a.Handoff.NextTest)
			if a.Handoff.Forced {
				outcome += " (by the host)"
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d/%d | %s | %s |\n", a.ID, a.Role, a.Claim, a.Status, a.Operations, a.MaxOps, outcome, next)
	}
}

func relationOf(c Claim) Relation {
	if c.Relation == "" {
		return RelRoot
	}
	return c.Relation
}

// linkSummary is each link, counting or with its reasons.
func linkSummary(links []Link) string {
	if len(links) == 0 {
		return "—"
	}
	parts := make([]string, len(links))
	for i, k := range links {
		if k.Counts {
			parts[i] = fmt.Sprintf("%s v%d counts", k.Experiment, k.ContractVersion)
		} else {
			parts[i] = fmt.Sprintf("%s v%d does not count (%s)", k.Experiment, k.ContractVersion, strings.Join(k.Reasons, "; "))
		}
	}
	return strings.Join(parts, "; ")
}
