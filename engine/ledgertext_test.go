package engine

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLedgerEscapesAgentText: text an agent wrote (a claim's statement, a
// verdict's rationale, an experiment's arguments, a stderr line in the
// operator's attention) reaches LEDGER.md with its terminal escapes
// escaped, on one line, and a long one is cut between two characters.
func TestLedgerEscapesAgentText(t *testing.T) {
	osc := "\x1b]0;owned\x07\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07"
	attention := "review rev_1 failed 3 times: " + osc
	long := strings.Repeat("é", 200)
	r := Report{Snapshot: Snapshot{
		Claims:      []Claim{{ID: "root", Status: "open", Statement: "it holds" + osc + "\b\b\b\bsupported"}},
		Reviews:     []Review{{ID: "rev_1", Claim: "root", Status: "queued", LastError: long}},
		Experiments: []Receipt{{ID: "exp_1", Status: ExpSucceeded, Source: "a.py", Args: []string{osc, "x\ny"}}},
	}}
	r.Status, r.Provider.Attention = StatusPausedExternalError, &attention
	out := Ledger(r)
	for i, c := range out {
		if c != '\n' && IsControl(c) {
			t.Fatalf("a control character %q at byte %d of LEDGER.md:\n%s", c, i, out)
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("LEDGER.md is not valid UTF-8: a long cell was cut inside a character")
	}
	if !strings.Contains(out, strings.Repeat("é", 157)+"…") {
		t.Errorf("the long rationale was not cut to 157 characters and an ellipsis:\n%s", out)
	}
}
