package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// TestStreamedReportsMatchTheSnapshot: report.json, LEDGER.md and
// status --json written by streaming the receipts are the bytes the
// whole-snapshot rendering gives (remaining_seconds aside, which moves with the clock), with none,
// one and many receipts of two backends.
func TestStreamedReportsMatchTheSnapshot(t *testing.T) {
	for _, n := range []int{0, 1, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			ctx := context.Background()
			err := s.Tx(ctx, func(tx *store.Tx) error {
				for i := range n {
					r := Receipt{ID: fmt.Sprintf("exp_%d", i), Status: ExpSucceeded, IsolationBackend: sandbox.Bubblewrap,
						Source: "sim.py", Args: []string{"--n", fmt.Sprint(i), "a|b <&>"}}
					if i%3 == 1 {
						r.IsolationBackend, r.Status = sandbox.ProcessCooperative, ExpFailed
					}
					if _, err := putReceipt(tx, r); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want, err := reportFiles(ctx, c, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteReports(ctx, c, s); err != nil {
				t.Fatal(err)
			}
			snap, err := LoadSnapshot(ctx, c, s)
			if err != nil {
				t.Fatal(err)
			}
			var whole, streamed bytes.Buffer
			enc := json.NewEncoder(&whole) // as status --json printed it
			enc.SetIndent("", "  ")
			if err := enc.Encode(snap); err != nil {
				t.Fatal(err)
			}
			if err := (&View{c: c, s: s}).WriteSnapshotJSON(ctx, &streamed); err != nil {
				t.Fatal(err)
			}
			want = append(want, reportFile{"status --json", whole.Bytes()})
			clock := regexp.MustCompile(`"remaining_seconds": \d+`)
			for _, f := range want {
				got, err := os.ReadFile(filepath.Join(c.Dir, f.name))
				if f.name == "status --json" {
					got, err = streamed.Bytes(), nil
				}
				if err != nil {
					t.Fatal(err)
				}
				if g, w := clock.ReplaceAll(got, nil), clock.ReplaceAll(f.body, nil); string(g) != string(w) {
					t.Errorf("%s streamed:\n%s\nwant:\n%s", f.name, g, w)
				}
			}
		})
	}
}
