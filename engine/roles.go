package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simjecture/simjecture/store"
)

// This file is the roles of the lab calls (contract section 12): who makes
// a call, read by the host from the study's mode and its active assignment
// (never from the agent's own environment, which it could change).

// Role names who makes a lab call.
type Role string

// The roles. Worker is minimal's one agent; the falsifier and the repair
// scientist are structured's assignments, the researcher frontier's one;
// the operator is whoever calls before the host's first assignment (at
// the shell).
const (
	RoleWorker          Role = "worker"
	RoleFalsifier       Role = "falsifier"
	RoleRepairScientist Role = "repair_scientist"
	RoleResearcher      Role = "researcher"
	RoleOperator        Role = "operator"
)

// The review roles: they make no lab call at all.
const (
	RoleReviewer Role = "reviewer"
	RoleJudge    Role = "judge"
)

// modeRoles are the roles that make calls in each mode.
var modeRoles = map[string][]Role{
	"minimal":    {RoleWorker},
	"structured": {RoleFalsifier, RoleRepairScientist, RoleOperator},
	"frontier":   {RoleResearcher, RoleOperator},
}

// Role sets of the call table.
var (
	everyRole     = []Role{RoleWorker, RoleFalsifier, RoleRepairScientist, RoleResearcher, RoleOperator}
	minimalOnly   = []Role{RoleWorker}
	runners       = []Role{RoleWorker, RoleFalsifier, RoleResearcher, RoleOperator}
	ledgerWriters = []Role{RoleFalsifier, RoleRepairScientist, RoleResearcher, RoleOperator}
	evidenceRoles = []Role{RoleFalsifier, RoleResearcher, RoleOperator}
	assignedRoles = []Role{RoleFalsifier, RoleRepairScientist}
)

// MaxAssignmentOps is the operation budget of one assignment.
const MaxAssignmentOps = 80

// AssignmentStatus is where an assignment stands.
type AssignmentStatus string

// The assignment statuses.
const (
	AssignmentActive AssignmentStatus = "active"
	AssignmentEnded  AssignmentStatus = "ended"
)

// Assignment is one role on one claim: host-chosen, its operations
// counted, and ended by an immutable handoff.
type Assignment struct {
	ID         string           `json:"id"`
	Role       Role             `json:"role"`
	Claim      string           `json:"claim"`
	Status     AssignmentStatus `json:"status"`
	Operations int              `json:"operations"`
	MaxOps     int              `json:"max_operations"`
	Children   []string         `json:"children"` // claims it registered
	Cursor     string           `json:"cursor,omitempty"`
	Turns      int              `json:"turns"`
	Handoff    *Handoff         `json:"handoff"`
	CreatedAt  time.Time        `json:"created_at"`
}

// Handoff ends an assignment.
type Handoff struct {
	Outcome     string    `json:"outcome"`
	Experiments []string  `json:"experiments"`
	NextTest    string    `json:"next_test"`
	Forced      bool      `json:"forced,omitempty"` // written by the host (budget spent, route changed)
	CreatedAt   time.Time `json:"created_at"`
}

// activeAssignment is the study's active assignment, or nil.
func activeAssignment(tx *store.Tx) (*Assignment, error) {
	list, err := listDocs[Assignment](tx, store.Assignments, string(AssignmentActive))
	if err != nil || len(list) == 0 {
		return nil, err
	}
	a := list[len(list)-1]
	return &a, nil
}

// latestAssignment is the study's newest assignment, active or ended, or
// nil: after a handoff its role stays the caller's, with reads only, until
// the host starts the next one.
func latestAssignment(tx *store.Tx) (*Assignment, error) {
	list, err := listDocs[Assignment](tx, store.Assignments)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	a := slices.MaxFunc(list, func(x, y Assignment) int { return strings.Compare(x.ID, y.ID) })
	return &a, nil
}

func putAssignment(tx *store.Tx, a Assignment) error {
	_, err := putRecord(tx, store.Assignments, a.ID, string(a.Status), a)
	return err
}

// studyRole is the role a call of this study is made in now.
func studyRole(tx *store.Tx, mode string) (Role, *Assignment, error) {
	if !slices.Contains(ScientificModes, mode) {
		return RoleWorker, nil, nil
	}
	a, err := latestAssignment(tx)
	if err != nil || a == nil {
		return RoleOperator, nil, err
	}
	return a.Role, a, nil
}

// callRole reads the mode and role of the study for one call.
func (l *Lab) callRole(ctx context.Context) (Role, *Assignment, error) {
	if l.role != "" {
		return l.role, nil, nil
	}
	k, err := l.loadContract(ctx)
	if err != nil {
		return "", nil, err
	}
	var role Role
	var a *Assignment
	err = l.S.Read(ctx, func(tx *store.Tx) error {
		var err error
		role, a, err = studyRole(tx, k.Mode)
		return err
	})
	return role, a, err
}

// spend counts one operation of the current assignment in the call's own
// transaction: an ended assignment only reads, and the budget is firm.
func spend(tx *store.Tx) (*Assignment, error) {
	a, err := latestAssignment(tx)
	if err != nil || a == nil {
		return nil, err
	}
	if a.Status != AssignmentActive {
		return nil, fmt.Errorf("assignment %s has handed off (%s); only reads remain until the host assigns the next: %w",
			a.ID, a.Handoff.Outcome, ErrLab)
	}
	if a.Operations >= a.MaxOps {
		return nil, fmt.Errorf("assignment %s has used its %d operations; hand off: %w", a.ID, a.MaxOps, ErrLab)
	}
	a.Operations++
	return a, putAssignment(tx, *a)
}

// inScope reports whether claim is the assignment's or one of its
// registered children's (a researcher owns every claim).
func (a *Assignment) inScope(tx *store.Tx, claim string) error {
	if a == nil || a.Role == RoleResearcher || claim == a.Claim || slices.Contains(a.Children, claim) {
		return nil
	}
	// Non-scientific descendants of the target are in scope too.
	c, err := getClaim(tx, claim)
	for depth := 0; err == nil && c.Parent != nil && depth < 1000; depth++ {
		if *c.Parent == a.Claim && a.Role == RoleFalsifier && kindOf(c) != KindScientific {
			return nil
		}
		c, err = getClaim(tx, *c.Parent)
	}
	return fmt.Errorf("claim %s is outside assignment %s (%s on %s): %w", claim, a.ID, a.Role, a.Claim, ErrLab)
}
