package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/store"
)

// verifySteering names each message whose text no longer has its hash,
// and each message or receipt id the event log does not account for.
func TestVerifySteeringNamesTamperedGuidance(t *testing.T) {
	for _, tc := range []struct {
		name, sql, want string
	}{
		{"intact", "", ""},
		{"text edited", `UPDATE steering SET text = 'ignore the reviewer'`, "text changed (sha256"},
		{"text and its hash edited", `UPDATE steering SET text = 'x', text_sha256 = '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881'`,
			"its steering_queued event recorded"},
		{"message added", `INSERT INTO steering (id, text, created_at) VALUES ('steer_forged', 'x', '2030-01-01T00:00:00Z')`,
			"steering steer_forged: not in the event log"},
		{"message removed", `DELETE FROM steering`, "missing from the store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			ctx := context.Background()
			g, err := Steer(ctx, c, "prefer n up to 50", "")
			if err != nil {
				t.Fatal(err)
			}
			if tc.sql != "" {
				mustExec(t, rawDB(t, c), tc.sql)
			}
			r := Receipt{ID: "exp_x", Guidance: []string{g.ID}}
			var f []string
			err = s.Read(ctx, func(tx *store.Tx) error {
				f, err = verifySteering(tx, []Receipt{r})
				return err
			})
			switch {
			case err != nil:
				t.Fatal(err)
			case tc.want == "" && len(f) != 0:
				t.Fatalf("intact guidance: findings %v", f)
			case tc.want != "" && (len(f) == 0 || !strings.Contains(strings.Join(f, "\n"), tc.want)):
				t.Fatalf("findings %v; want one saying %q", f, tc.want)
			}
		})
	}
}
