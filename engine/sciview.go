package engine

import (
	"github.com/simjecture/simjecture/store"
)

// This file is what the snapshot adds for the scientific modes: the
// current role and assignment, every assignment with its handoff, and the
// state of each claim's latest contract, for status --json, report.json
// and a TUI.

// ContractState is where a claim's latest contract version stands.
type ContractState string

// The contract states.
const (
	ContractDraft    ContractState = "draft"    // never approved
	ContractApproved ContractState = "approved" // approved as it is now
	ContractVoided   ContractState = "voided"   // an approval exists, but for an earlier version or another bound source
)

// ClaimContract is the state of one claim's latest contract version.
type ClaimContract struct {
	Claim   string        `json:"claim"`
	Version int           `json:"version"`
	State   ContractState `json:"state"`
}

// ScienceView is the ledger's part of a snapshot.
type ScienceView struct {
	Role        Role            `json:"role,omitempty"`
	Assignment  *Assignment     `json:"assignment,omitempty"`
	Assignments []Assignment    `json:"assignments,omitempty"`
	Contracts   []ClaimContract `json:"contract_states,omitempty"`
}

// readScience reads the ledger's part of a snapshot; minimal has none.
func readScience(tx *store.Tx, c Campaign, mode string) (ScienceView, error) {
	var v ScienceView
	if ModeRole(mode) == RoleWorker {
		return v, nil
	}
	var err error
	if v.Role, v.Assignment, err = studyRole(tx, mode); err != nil {
		return v, err
	}
	if v.Assignments, err = listDocs[Assignment](tx, store.Assignments); err != nil {
		return v, err
	}
	claims, err := listDocs[Claim](tx, store.Claims)
	if err != nil {
		return v, err
	}
	approvals, err := listDocs[Approval](tx, store.Approvals)
	if err != nil {
		return v, err
	}
	lab := &Lab{C: c}
	for _, cl := range claims {
		latest := cl.latest()
		if latest == nil {
			continue
		}
		st, err := lab.contractState(tx, cl, approvals)
		if err != nil {
			return v, err
		}
		v.Contracts = append(v.Contracts, ClaimContract{Claim: cl.ID, Version: latest.Version, State: st})
	}
	return v, nil
}

func (l *Lab) contractState(tx *store.Tx, c Claim, approvals []Approval) (ContractState, error) {
	ok, _, err := l.approvalOf(tx, c)
	switch {
	case err != nil:
		return "", err
	case ok:
		return ContractApproved, nil
	}
	for _, a := range approvals {
		if a.Claim == c.ID && a.Decision == DecisionApproved {
			return ContractVoided, nil
		}
	}
	return ContractDraft, nil
}
