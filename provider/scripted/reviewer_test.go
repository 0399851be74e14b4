package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rootPacket builds a root review packet over the given receipts.
func rootPacket(disposition string, runs ...Receipt) Packet {
	return Packet{ClaimID: rootClaim, Statement: rootStatement, Hypothesis: rootStatement,
		Disposition: disposition, Conclusion: "measured", Experiments: runs}
}

// repairPacket builds a supported request for the repair with an optional challenge.
func repairPacket(t *testing.T, evidence Receipt, challenge *Receipt) Packet {
	p := Packet{ClaimID: "c1", Statement: repairStatement, Hypothesis: rootStatement,
		Disposition: dispSupported, Acceptance: "max_rel_energy_error <= 0.01",
		Parent:      rawJSON(t, map[string]any{"id": "root", "statement": rootStatement, "status": "falsified"}),
		Experiments: []Receipt{evidence}}
	if challenge != nil {
		p.Experiments = append(p.Experiments, *challenge)
		p.Challenge = &PacketChallenge{Strategy: "harder case", Outcome: "ok",
			Experiments: rawJSON(t, []string{challenge.ID})}
	}
	return p
}

func TestReview(t *testing.T) {
	t.Parallel()
	euler := fakeRun{"euler", 0.5, 10, 1000, 0.58187}
	eulerSmall := fakeRun{"euler", 0.5, 10, 1000, 0.004}
	eulerOffCase := fakeRun{"euler", 0.9, 10, 1000, 0.9}
	leap := fakeRun{"leapfrog", 0.5, 10, 1000, 1.073e-4}
	hard := fakeRun{"leapfrog", 0.8, 100, 1000, 5.673e-3}
	tooHard := fakeRun{"leapfrog", 0.85, 100, 1000, 1.875e-2}
	easier := fakeRun{"leapfrog", 0.3, 100, 1000, 1e-5}
	tests := []struct {
		name     string
		packet   func(t *testing.T) Packet
		decision string
		quote    string // a figure the rationale or a gap must quote
	}{
		{"approve falsified", func(t *testing.T) Packet {
			return rootPacket(dispFalsified, writeReceipt(t, "exp_e", euler))
		}, decisionApproved, "0.58187"},
		{"refuse falsified under threshold", func(t *testing.T) Packet {
			return rootPacket(dispFalsified, writeReceipt(t, "exp_e", eulerSmall))
		}, decisionNeedsRevision, "0.004"},
		{"refuse falsified off the stated case", func(t *testing.T) Packet {
			return rootPacket(dispFalsified, writeReceipt(t, "exp_e", eulerOffCase))
		}, decisionNeedsRevision, "e=0.5"},
		{"refuse falsified with wrong method", func(t *testing.T) Packet {
			return rootPacket(dispFalsified, writeReceipt(t, "exp_e", fakeRun{"leapfrog", 0.5, 10, 1000, 0.5}))
		}, decisionNeedsRevision, "method euler"},
		{"approve supported repair", func(t *testing.T) Packet {
			ch := writeReceipt(t, "exp_c", hard)
			return repairPacket(t, writeReceipt(t, "exp_l", leap), &ch)
		}, decisionApproved, "0.005673"},
		{"refuse supported without challenge", func(t *testing.T) Packet {
			return repairPacket(t, writeReceipt(t, "exp_l", leap), nil)
		}, decisionNeedsRevision, "challenge"},
		{"refuse supported when challenge fails", func(t *testing.T) Packet {
			ch := writeReceipt(t, "exp_c", tooHard)
			return repairPacket(t, writeReceipt(t, "exp_l", leap), &ch)
		}, decisionNeedsRevision, "0.01875"},
		{"refuse challenge that is easier", func(t *testing.T) Packet {
			ch := writeReceipt(t, "exp_c", easier)
			return repairPacket(t, writeReceipt(t, "exp_l", leap), &ch)
		}, decisionNeedsRevision, "not harder"},
		{"refuse supported without stated-case evidence", func(t *testing.T) Packet {
			ch := writeReceipt(t, "exp_c", hard)
			return repairPacket(t, writeReceipt(t, "exp_l", fakeRun{"leapfrog", 0.5, 10, 2000, 2e-5}), &ch)
		}, decisionNeedsRevision, "stated case"},
		{"refuse acceptance that disagrees with statement", func(t *testing.T) Packet {
			ch := writeReceipt(t, "exp_c", hard)
			p := repairPacket(t, writeReceipt(t, "exp_l", leap), &ch)
			p.Acceptance = "max_rel_energy_error <= 0.05"
			return p
		}, decisionNeedsRevision, "disagrees"},
		{"refuse failed experiment", func(t *testing.T) Packet {
			r := writeReceipt(t, "exp_e", euler)
			r.Status = "failed"
			return rootPacket(dispFalsified, r)
		}, decisionNeedsRevision, "failed"},
		{"refuse unresolved", func(t *testing.T) Packet {
			return rootPacket(dispUnresolved, writeReceipt(t, "exp_e", euler))
		}, decisionNeedsRevision, "0.58187"},
		{"refuse when no threshold", func(t *testing.T) Packet {
			p := rootPacket(dispFalsified, writeReceipt(t, "exp_e", euler))
			p.Statement, p.Hypothesis = "Euler conserves energy.", "Euler conserves energy."
			return p
		}, decisionNeedsRevision, "threshold"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := Review(tc.packet(t))
			t.Logf("%s: %s gaps=%q next=%v", v.Decision, v.Rationale, v.EvidenceGaps, v.NextTest)
			checkVerdictShape(t, v)
			if v.Decision != tc.decision {
				t.Fatalf("decision = %s, want %s; rationale %q gaps %q", v.Decision, tc.decision, v.Rationale, v.EvidenceGaps)
			}
			text := v.Rationale + " " + strings.Join(v.EvidenceGaps, " ")
			if !strings.Contains(text, tc.quote) {
				t.Fatalf("verdict does not quote %q: %s", tc.quote, text)
			}
		})
	}
}

// checkVerdictShape checks the contract's rules on a verdict.
func checkVerdictShape(t *testing.T, v Verdict) {
	t.Helper()
	if len(v.Rationale) < 16 {
		t.Fatalf("rationale too short: %q", v.Rationale)
	}
	switch v.Decision {
	case decisionApproved:
		if len(v.EvidenceGaps) != 0 || v.NextTest != nil || v.Disposition == dispUnresolved {
			t.Fatalf("approved verdict with gaps or next test: %+v", v)
		}
	case decisionNeedsRevision:
		if len(v.EvidenceGaps) == 0 || v.NextTest == nil {
			t.Fatalf("needs_revision verdict without gaps or next test: %+v", v)
		}
	default:
		t.Fatalf("decision %q", v.Decision)
	}
}

func TestReviewHashMismatch(t *testing.T) {
	t.Parallel()
	r := writeReceipt(t, "exp_e", fakeRun{"euler", 0.5, 10, 1000, 0.58187})
	path := filepath.Join(r.ArtifactDir, "euler.json")
	if err := os.WriteFile(path, []byte(`{"method":"euler","max_rel_energy_error":0.9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	v := Review(rootPacket(dispFalsified, r))
	checkVerdictShape(t, v)
	if v.Decision != decisionNeedsRevision || !strings.Contains(strings.Join(v.EvidenceGaps, " "), "sha256") {
		t.Fatalf("tampered artifact not caught: %+v", v)
	}
}

func TestReviewChallengeReceiptsInChallenge(t *testing.T) {
	t.Parallel()
	leap := writeReceipt(t, "exp_l", fakeRun{"leapfrog", 0.5, 10, 1000, 1e-4})
	ch := writeReceipt(t, "exp_c", fakeRun{"leapfrog", 0.8, 100, 1000, 5e-3})
	p := repairPacket(t, leap, nil)
	p.Challenge = &PacketChallenge{Strategy: "harder", Experiments: rawJSON(t, []Receipt{ch})}
	if v := Review(p); v.Decision != decisionApproved {
		t.Fatalf("challenge given as receipts not used: %+v", v)
	}
	p.Challenge = &PacketChallenge{Strategy: "harder", Experiments: rawJSON(t, []string{"exp_missing"})}
	if v := Review(p); v.Decision != decisionNeedsRevision {
		t.Fatalf("missing challenge receipt approved: %+v", v)
	}
}

func TestReviewerPrintsVerdictLast(t *testing.T) {
	t.Parallel()
	p := rootPacket(dispFalsified, writeReceipt(t, "exp_e", fakeRun{"euler", 0.5, 10, 1000, 0.58187}))
	env := map[string]string{envRole: "reviewer"}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), func(k string) string { return env[k] }, nil,
		bytes.NewReader(rawJSON(t, p)), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
		t.Fatalf("last line is not JSON: %v", err)
	}
	if v["claim_id"] != rootClaim || v["decision"] != decisionApproved || v["next_test"] != nil {
		t.Fatalf("verdict %v", v)
	}
	if gaps, ok := v["evidence_gaps"].([]any); !ok || len(gaps) != 0 {
		t.Fatalf("evidence_gaps = %v, want []", v["evidence_gaps"])
	}
}
