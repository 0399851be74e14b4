package tui

import (
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestStoryColsNameTheClaim: the CLAIM column names the claim a scientific
// run serves, else the claim a minimal run was committed for, else a dash.
func TestStoryColsNameTheClaim(t *testing.T) {
	cases := []struct {
		name string
		r    engine.Receipt
		want string
	}{
		{"scientific run", engine.Receipt{Claim: "claim_4375370b09903da0", Purpose: "evidence"}, shortID("claim_4375370b09903da0")},
		{"minimal commitment", engine.Receipt{Commitment: "root", Purpose: "measure"}, "root"},
		{"scientific wins", engine.Receipt{Claim: "root", Commitment: "claim_x", Purpose: "p"}, "root"},
		{"none", engine.Receipt{Purpose: "p"}, "—"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := storyCols(tc.r)
			if !strings.HasPrefix(got, tc.want+" ") {
				t.Fatalf("storyCols = %q, want it to start with %q", got, tc.want)
			}
		})
	}
}
