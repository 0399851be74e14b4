package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/simjecture/simjecture/store"
)

// ApprovalDecision is a contract review's decision.
type ApprovalDecision string

// The contract-review decisions.
const (
	DecisionApproved      ApprovalDecision = "approved"
	DecisionNeedsRevision ApprovalDecision = "needs_revision"
)

// Approval is a contract review's decision on one packet. It is keyed by
// the packet's sha256: a new contract version, a changed bound source or a
// changed claim builds another packet, which this decision does not cover.
type Approval struct {
	PacketSHA256    string           `json:"packet_sha256"`
	Claim           string           `json:"claim"`
	ContractVersion int              `json:"contract_version"`
	Decision        ApprovalDecision `json:"decision"`
	Reviewer        string           `json:"reviewer"`
	CreatedAt       time.Time        `json:"created_at"`
}

// ContractPacket is what a contract review judges: the claim, its
// ancestors' statements, the study's operator files (by hash), the latest
// contract version and the bound source as it is now.
type ContractPacket struct {
	Stage              string           `json:"stage"`
	HypothesisSHA256   string           `json:"hypothesis_sha256"`
	InstructionsSHA256 string           `json:"instructions_sha256"`
	Claim              string           `json:"claim"`
	Kind               ClaimKind        `json:"kind"`
	Relation           Relation         `json:"relation"`
	Statement          string           `json:"statement"`
	Rationale          string           `json:"rationale"`
	Ancestors          []string         `json:"ancestors"` // statements, parent first
	Contract           EvidenceContract `json:"contract"`
	Sources            []PacketSource   `json:"sources"`
}

// PacketSource is a bound program as it is now under research/.
type PacketSource struct {
	Path      string `json:"path"`
	SHA256    string `json:"sha256,omitempty"`
	ReadError string `json:"read_error,omitempty"`
}

// contractPacket builds the packet of the claim's latest contract version.
func (l *Lab) contractPacket(tx *store.Tx, k Contract, c Claim) (ContractPacket, error) {
	v := c.latest()
	if v == nil {
		return ContractPacket{}, fmt.Errorf("claim %s has no evidence contract: %w", c.ID, ErrLab)
	}
	ancestors, err := ancestorStatements(tx, c)
	if err != nil {
		return ContractPacket{}, err
	}
	p := ContractPacket{Stage: "contract", HypothesisSHA256: k.HypothesisSHA256, InstructionsSHA256: k.InstructionsSHA256,
		Claim: c.ID, Kind: kindOf(c), Relation: c.Relation, Statement: c.Statement, Rationale: c.Rationale,
		Ancestors: ancestors, Contract: *v, Sources: []PacketSource{}}
	if v.Binding != nil {
		p.Sources = append(p.Sources, l.packetSource(v.Binding.Source))
	}
	return p, nil
}

func (l *Lab) packetSource(rel string) PacketSource {
	ps := PacketSource{Path: rel}
	f, _, err := openUnder(l.C.Research(), "source", rel)
	if err != nil {
		ps.ReadError = err.Error()
		return ps
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		ps.ReadError = err.Error()
		return ps
	}
	ps.SHA256 = docHash(b)
	return ps
}

func ancestorStatements(tx *store.Tx, c Claim) ([]string, error) {
	out := []string{}
	for c.Parent != nil {
		p, err := getClaim(tx, *c.Parent)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Statement)
		c = p
	}
	return out, nil
}

// PacketSHA256 is the hash an approval of this packet is keyed by.
func (p ContractPacket) PacketSHA256() string { return docHash(canonicalJSON(p)) }

// approvalOf reports whether the claim's latest contract version, as it is
// now, is approved; when it is not, the reason says why.
func (l *Lab) approvalOf(tx *store.Tx, c Claim) (bool, string, error) {
	k, err := l.studyContract(tx)
	if err != nil {
		return false, "", err
	}
	p, err := l.contractPacket(tx, k, c)
	if err != nil {
		return false, "", err
	}
	for _, s := range p.Sources {
		if s.ReadError != "" {
			return false, fmt.Sprintf("bound source %s cannot be read", s.Path), nil
		}
	}
	d, err := tx.GetDoc(store.Approvals, p.PacketSHA256())
	if err != nil {
		return false, fmt.Sprintf("contract version %d of %s is not approved by a contract review (as it is now: a new version or a changed bound source needs a new review)", p.Contract.Version, c.ID), nil
	}
	var a Approval
	if err := json.Unmarshal(d.JSON, &a); err != nil {
		return false, "", fmt.Errorf("decode approval %s: %w", d.ID, err)
	}
	if a.Decision != DecisionApproved {
		return false, fmt.Sprintf("contract version %d of %s was judged %s", a.ContractVersion, c.ID, a.Decision), nil
	}
	return true, "", nil
}

// putApproval records a contract review's decision, keyed by its packet.
// An approval is immutable: a second decision on the same packet is refused.
func putApproval(tx *store.Tx, a Approval) error {
	if _, err := tx.GetDoc(store.Approvals, a.PacketSHA256); err == nil {
		return fmt.Errorf("packet %s already has a decision: %w", a.PacketSHA256, ErrLab)
	}
	_, err := putRecord(tx, store.Approvals, a.PacketSHA256, string(a.Decision), a)
	return err
}
