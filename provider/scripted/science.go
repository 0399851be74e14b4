package scripted

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// This file is the scripted agent's work in the structured and frontier
// modes: the same Kepler science, through the claim ledger. Every decision
// is read from the study: the route from the ledger, the direction of a
// contract from a workbench measurement, the counterexamples from the
// falsified parent's counting links, the support request from a counting
// link of an approved contract.

// CheckName is the wrapper whose JSON output the contracts' machine checks read.
const CheckName = "energy_check.py"

//go:embed assets/energy_check.py
var energyCheckSource []byte

// The roles of the scientific modes (contract section 12).
const (
	roleFalsifier  = "falsifier"
	roleRepair     = "repair_scientist"
	roleResearcher = "researcher"
)

// sciClaim is a claim of the ledger as lab status shows it.
type sciClaim struct {
	ID              string        `json:"id"`
	Statement       string        `json:"statement"`
	Parent          *string       `json:"parent"`
	Status          string        `json:"status"`
	Kind            string        `json:"kind"`
	Relation        string        `json:"relation"`
	Contracts       []sciContract `json:"contracts"`
	Links           []sciLink     `json:"links"`
	DecisiveVersion int           `json:"decisive_contract_version"`
}

type sciContract struct {
	Version int        `json:"version"`
	Checks  []sciCheck `json:"checks"`
	Binding *struct {
		Source string     `json:"source"`
		Args   [][]string `json:"args"`
	} `json:"binding"`
}

type sciCheck struct {
	Output string `json:"output"`
	Path   string `json:"path"`
	Equals any    `json:"equals"`
}

type sciLink struct {
	Experiment      string   `json:"experiment"`
	ContractVersion int      `json:"contract_version"`
	Counts          bool     `json:"counts"`
	Reasons         []string `json:"reasons"`
}

type sciReceipt struct {
	ID          string   `json:"id"`
	Status      string   `json:"status"`
	Stage       string   `json:"stage"`
	Claim       string   `json:"claim"`
	Args        []string `json:"args"`
	ArtifactDir string   `json:"artifact_dir"`
}

type sciReview struct {
	ID              string   `json:"id"`
	Claim           string   `json:"claim"`
	Stage           string   `json:"stage"`
	ContractVersion int      `json:"contract_version"`
	Status          string   `json:"status"`
	Verdict         *Verdict `json:"verdict"`
}

// sciSnapshot is the part of lab status the scientific worker reads.
type sciSnapshot struct {
	Role        string       `json:"role"`
	Claims      []sciClaim   `json:"claims"`
	Experiments []sciReceipt `json:"experiments"`
	Reviews     []sciReview  `json:"reviews"`
}

func (s *sciSnapshot) claim(id string) (sciClaim, bool) {
	i := slices.IndexFunc(s.Claims, func(c sciClaim) bool { return c.ID == id })
	if i < 0 {
		return sciClaim{}, false
	}
	return s.Claims[i], true
}

// route is the host's routing rule, as the researcher applies it to itself:
// the first falsified scientific leaf needs a repair, else the first open
// scientific claim is tested.
func (s *sciSnapshot) route() (role, claim string) {
	repaired := map[string]bool{}
	for _, c := range s.Claims {
		if c.Relation == "repairs" && c.Parent != nil {
			repaired[*c.Parent] = true
		}
	}
	for _, c := range s.Claims {
		if c.Kind == "scientific" && c.Status == dispFalsified && !repaired[c.ID] {
			return roleRepair, c.ID
		}
	}
	for _, c := range s.Claims {
		if c.Kind == "scientific" && c.Status == claimOpen {
			return roleFalsifier, c.ID
		}
	}
	return "", ""
}

// approved reports whether the claim's latest contract has an approving
// contract review (the host keys it to the packet; the worker reads the verdict).
func (s *sciSnapshot) approved(c sciClaim) (ok, refused bool) {
	v := len(c.Contracts)
	for _, r := range s.Reviews {
		if r.Stage == "contract" && r.Claim == c.ID && r.ContractVersion == v && r.Verdict != nil {
			if r.Verdict.Decision == decisionApproved {
				return true, false
			}
			refused = true
		}
	}
	return false, refused
}

// runOf is the newest run of a stage for a claim.
func (s *sciSnapshot) runOf(claim, stage string) (sciReceipt, bool) {
	for _, r := range s.Experiments { // newest first
		if r.Claim == claim && r.Stage == stage {
			return r, true
		}
	}
	return sciReceipt{}, false
}

// checkDoc is energy_check.py's output.
type checkDoc struct {
	Tolerance float64 `json:"tolerance"`
	Within    bool    `json:"within_tolerance"`
	Stated    *struct {
		Method string  `json:"method"`
		MaxErr float64 `json:"max_rel_energy_error"`
		E      float64 `json:"eccentricity"`
		Orbits float64 `json:"orbits"`
		Steps  float64 `json:"steps_per_orbit"`
		Within bool    `json:"within_tolerance"`
	} `json:"stated"`
	Challenge *struct {
		MaxErr float64 `json:"max_rel_energy_error"`
		E      float64 `json:"eccentricity"`
		Orbits float64 `json:"orbits"`
		Within bool    `json:"within_tolerance"`
	} `json:"challenge"`
}

// readCheck reads a run's energy_check.py output from its artifact folder.
func readCheck(dir, name string) (checkDoc, error) {
	var d checkDoc
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return d, fmt.Errorf("read %s: %w", name, err)
	}
	if err := json.Unmarshal(b, &d); err != nil || d.Stated == nil {
		return d, fmt.Errorf("%s is not an energy check: %w", name, ErrProtocol)
	}
	return d, nil
}

// checkArgs is the energy_check.py command line of a case, with its challenge when harder is set.
func checkArgs(s runSpec, tol float64, harder *runSpec, out string) []string {
	args := []string{"--method", s.Method, "--e", num(s.E), "--orbits", num(s.Orbits),
		"--steps-per-orbit", num(s.StepsPerOrbit), "--tolerance", num(tol)}
	if harder != nil {
		args = append(args, "--challenge-e", num(harder.E), "--challenge-orbits", num(harder.Orbits))
	}
	return append(args, "--out", out)
}

// argValue is the value after flag in args, or "".
func argValue(args []string, flag string) string {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

// isRepair reports whether the claim is a repairs claim.
func (c sciClaim) isRepair() bool { return c.Relation == "repairs" }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
