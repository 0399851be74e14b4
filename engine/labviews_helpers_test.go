package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// seedExperiments records n finished receipts directly, in one
// transaction, each with log tails of tail bytes, statuses cycling through
// statuses; it returns their ids, oldest first.
func seedExperiments(t testing.TB, s *store.Store, n, tail int, statuses ...ExpStatus) []string {
	t.Helper()
	if len(statuses) == 0 {
		statuses = []ExpStatus{ExpSucceeded}
	}
	ids := make([]string, n)
	err := s.Tx(context.Background(), func(tx *store.Tx) error {
		for i := range n {
			r := seedReceipt(i, statuses[i%len(statuses)], tail)
			ids[i] = r.ID
			if _, err := putReceipt(tx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func seedReceipt(i int, st ExpStatus, tail int) Receipt {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	rc, wall, rss := 0, 0.4, int64(10<<20)
	return Receipt{ID: fmt.Sprintf("exp_%024d", i), Status: st, IsolationBackend: sandbox.Bubblewrap, Machine: "local",
		Source: "sim.py", Args: []string{"--n", fmt.Sprint(i)}, Stage: "evidence", Timeout: 600,
		Resources: Resources{CPUs: 1, MemoryMB: 4096, MaxFileMB: 1024},
		Inputs:    map[string]string{"sim.py": strings.Repeat("a", 64)}, Outputs: []string{"result.json"},
		Artifacts:  map[string]sandbox.Artifact{"result.json": {SHA256: strings.Repeat("b", 64), Bytes: 123}},
		ReturnCode: &rc, WallSeconds: &wall, PeakRSSBytes: &rss,
		StdoutTail: strings.Repeat("o", tail), StderrTail: strings.Repeat("e", tail),
		CreatedAt: now, StartedAt: &now, FinishedAt: &now}
}

// seedReviews records n resolved reviews of root, oldest first, and returns their ids.
func seedReviews(t testing.TB, s *store.Store, n int, status string) []string {
	t.Helper()
	ids := make([]string, n)
	err := s.Tx(context.Background(), func(tx *store.Tx) error {
		for i := range n {
			r := Review{ID: fmt.Sprintf("rev_%s_%03d", status, i), Claim: RootClaim, Disposition: "falsified",
				Conclusion: "it fails", Experiments: []string{}, Status: status, Attempts: 1,
				CreatedAt: time.Date(2026, 1, 2, 0, 0, i, 0, time.UTC)}
			if status == "resolved" {
				r.Verdict = &Verdict{ClaimID: RootClaim, Decision: "needs_revision", Disposition: "falsified",
					Rationale: strings.Repeat("r", 600), EvidenceGaps: []string{"more cases"}}
			}
			ids[i] = r.ID
			if _, err := putRecord(tx, store.Reviews, r.ID, status, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// countRows counts the notes and the events.
func countRows(t *testing.T, s *store.Store) (notes, events int) {
	t.Helper()
	err := s.Read(context.Background(), func(tx *store.Tx) error {
		var err error
		if notes, err = tx.CountNotes(); err != nil {
			return err
		}
		evs, err := tx.EventsAfter(0, 1<<20)
		events = len(evs)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return notes, events
}

// checkLabError holds err to a one-line lab error containing want.
func checkLabError(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case !errors.Is(err, ErrLab) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n"):
		t.Fatalf("error %q, want a one-line lab error containing %q", err, want)
	}
}
