package scripted

// Artifact is one collected output file of an experiment receipt.
type Artifact struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// Receipt is the part of an experiment receipt (contract section 6) that the
// scripted agent reads.
type Receipt struct {
	ID          string              `json:"id"`
	Status      string              `json:"status"`
	Source      string              `json:"source"`
	Args        []string            `json:"args"`
	Stage       string              `json:"stage"`
	Outputs     []string            `json:"outputs"`
	Artifacts   map[string]Artifact `json:"artifacts"`
	ArtifactDir string              `json:"artifact_dir"`
	WallSeconds *float64            `json:"wall_seconds"`
}

// Claim is one claim of the study snapshot.
type Claim struct {
	ID         string `json:"id"`
	Statement  string `json:"statement"`
	Parent     string `json:"parent"`
	Status     string `json:"status"`
	Acceptance string `json:"acceptance,omitempty"`
}

// ReviewRequest is one review request of the study snapshot.
type ReviewRequest struct {
	ID          string   `json:"id"`
	Claim       string   `json:"claim"`
	Disposition string   `json:"disposition"`
	Status      string   `json:"status"`
	Attempts    int      `json:"attempts"`
	Verdict     *Verdict `json:"verdict"`
}

// Verdict is a reviewer's decision. The reviewer prints it as the last line
// of stdout; the snapshot carries it inside each resolved review.
type Verdict struct {
	ClaimID      string   `json:"claim_id,omitempty"`
	Decision     string   `json:"decision"`
	Disposition  string   `json:"disposition"`
	Rationale    string   `json:"rationale"`
	EvidenceGaps []string `json:"evidence_gaps"`
	NextTest     any      `json:"next_test"`
}

// Snapshot is the part of the study snapshot (`lab status`) the worker reads.
type Snapshot struct {
	StudyID     string          `json:"study_id"`
	Status      string          `json:"status"`
	Experiments []Receipt       `json:"experiments"`
	Claims      []Claim         `json:"claims"`
	Reviews     []ReviewRequest `json:"reviews"`
}

// Experiment statuses, claim statuses, dispositions and decisions.
const (
	statusQueued    = "queued"
	statusRunning   = "running"
	statusSucceeded = "succeeded"

	claimOpen = "open"

	dispSupported  = "supported"
	dispFalsified  = "falsified"
	dispUnresolved = "unresolved"

	decisionApproved      = "approved"
	decisionNeedsRevision = "needs_revision"

	reviewQueued = "queued"
	rootClaim    = "root"
)

// claim returns the claim with the given id, if any.
func (s *Snapshot) claim(id string) (Claim, bool) {
	for _, c := range s.Claims {
		if c.ID == id {
			return c, true
		}
	}
	return Claim{}, false
}

// hasExperiment reports whether the snapshot already lists the experiment id.
func (s *Snapshot) hasExperiment(id string) bool {
	for _, r := range s.Experiments {
		if r.ID == id {
			return true
		}
	}
	return false
}

// reviewsOf returns the reviews of one claim in snapshot order.
func (s *Snapshot) reviewsOf(claimID string) []ReviewRequest {
	var out []ReviewRequest
	for _, r := range s.Reviews {
		if r.Claim == claimID {
			out = append(out, r)
		}
	}
	return out
}

// pending reports whether an experiment status is not yet final.
func pending(status string) bool {
	return status == statusQueued || status == statusRunning || status == ""
}
