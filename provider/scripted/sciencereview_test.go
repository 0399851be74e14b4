package scripted

import (
	"encoding/json"
	"strings"
	"testing"
)

// sciencePacket builds a contract or support packet for the demo's root.
func sciencePacket(t *testing.T, stage, relation string, args []string, excerpt string) SciencePacket {
	t.Helper()
	var p SciencePacket
	p.Stage, p.Hypothesis = stage, DemoHypothesis()
	p.Contract.Claim, p.Contract.Relation, p.Contract.Statement = "root", relation, strings.Split(DemoHypothesis(), "\n")[0]
	p.Contract.Contract.Version = 1
	p.Contract.Contract.Checks = []sciCheck{{Output: "euler_check.json", Path: "$.stated.within_tolerance", Equals: false}}
	p.Contract.Contract.Binding = &struct {
		Source string     `json:"source"`
		Args   [][]string `json:"args"`
	}{Source: CheckName, Args: [][]string{args}}
	if excerpt != "" {
		p.Evidence = append(p.Evidence, struct {
			Excerpts map[string]string `json:"excerpts"`
		}{Excerpts: map[string]string{"euler_check.json": excerpt}})
	}
	return p
}

// TestReviewScience: the scripted reviewer approves only the operator's
// stated case and tolerance, and the judge only figures that meet the
// criterion; every gap is read from the packet.
func TestReviewScience(t *testing.T) {
	stated := []string{"--method", "euler", "--e", "0.5", "--orbits", "10", "--steps-per-orbit", "1000", "--tolerance", "0.01", "--out", "euler_check.json"}
	with := func(flag, v string) []string {
		out := append([]string{}, stated...)
		for i := range out {
			if out[i] == flag {
				out[i+1] = v
			}
		}
		return out
	}
	doc := func(maxErr float64, e float64) string {
		b, _ := json.Marshal(map[string]any{"tolerance": 0.01, "within_tolerance": maxErr <= 0.01,
			"stated": map[string]any{"method": "euler", "max_rel_energy_error": maxErr, "eccentricity": e, "orbits": 10, "steps_per_orbit": 1000}})
		return string(b)
	}
	cases := []struct {
		name   string
		packet SciencePacket
		want   string // the decision
		gap    string
	}{
		{"the stated design", sciencePacket(t, "contract", "root", stated, ""), "approved", ""},
		{"a looser tolerance", sciencePacket(t, "contract", "root", with("--tolerance", "0.6"), ""), "needs_revision", "the tolerance is 0.6"},
		{"fewer orbits", sciencePacket(t, "contract", "root", with("--orbits", "1"), ""), "needs_revision", "the number of orbits is 1"},
		{"a repair without a challenge", sciencePacket(t, "contract", "repairs", stated, ""), "needs_revision", "harder case"},
		{"figures within tolerance", sciencePacket(t, "support", "root", stated, doc(0.001, 0.5)), "sufficient", ""},
		{"figures above it", sciencePacket(t, "support", "root", stated, doc(0.58, 0.5)), "insufficient", "breaks max_rel_energy_error <= 0.01"},
		{"another case", sciencePacket(t, "support", "root", stated, doc(0.001, 0.1)), "insufficient", "not at the stated case"},
		{"no evidence", sciencePacket(t, "support", "root", stated, ""), "insufficient", "no measured evidence"},
	}
	for _, tc := range cases {
		v := ReviewScience(tc.packet)
		if v.Decision != tc.want || v.ClaimID != "root" || v.ContractVersion != 1 || tc.gap != "" && !strings.Contains(strings.Join(v.EvidenceGaps, "; "), tc.gap) {
			t.Errorf("%s: %s %v, want %s with a gap about %q", tc.name, v.Decision, v.EvidenceGaps, tc.want, tc.gap)
		}
	}
}
