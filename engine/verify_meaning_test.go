package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// runWithLogs is fakeRun that also keeps console logs, as the sandbox does.
func runWithLogs(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	res, err := fakeRun(ctx, spec)
	for _, name := range []string{sandbox.StdoutLog, sandbox.StderrLog} {
		if werr := os.WriteFile(filepath.Join(spec.ArtifactDir, name), []byte(name+" of the run\n"), 0o644); werr != nil {
			return res, werr
		}
	}
	return res, err
}

// finishedStudy is a study the supervisor ran to completion: one
// experiment with logs, root falsified by an approved review.
func finishedStudy(t *testing.T) (Campaign, *store.Store) {
	t.Helper()
	c, s := newTestStudy(t, func(r *Request) { r.CompletionPolicy = "answer" })
	agent := &fakeAgent{worker: studyWorker(t, c, s), review: approve}
	if final, _ := runSupervisor(t, c, agent, Options{Run: runWithLogs}); final != StatusCompleted {
		t.Fatalf("final %s", final)
	}
	return c, s
}

// rawDB opens the campaign's database behind the store's back, as someone
// editing the file would, with the append-only triggers dropped.
func rawDB(t *testing.T, c Campaign) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", c.DB())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for _, q := range []string{"DROP TRIGGER IF EXISTS events_no_update", "DROP TRIGGER IF EXISTS events_no_delete"} {
		mustExec(t, db, q)
	}
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestVerifyChecksMeaning tampers with a finished study as an adversary
// who knows the record's format would, each time keeping every hash that
// verify checked before consistent, and checks that verify names it.
func TestVerifyChecksMeaning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tamper func(t *testing.T, c Campaign, s *store.Store)
		want   string
	}{
		{"stdout.log edited", func(t *testing.T, c Campaign, s *store.Store) {
			r := firstReceipt(t, s)
			if r.Logs[sandbox.StdoutLog].SHA256 == "" {
				t.Fatalf("receipt %s records no log hashes: %+v", r.ID, r.Logs)
			}
			writeFileT(t, filepath.Join(c.ArtifactDir(r.ID), sandbox.StdoutLog), "a nicer story\n")
		}, "stdout.log changed"},
		{"root's status forged with a chained record event, report rewritten", func(t *testing.T, c Campaign, s *store.Store) {
			err := s.Tx(context.Background(), func(tx *store.Tx) error {
				root, err := getClaim(tx, RootClaim)
				if err != nil {
					return err
				}
				root.Status = "supported"
				return putClaim(tx, root)
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteReports(context.Background(), c, s); err != nil {
				t.Fatal(err)
			}
		}, "claim root is supported, but the last accepted verdict says falsified"},
		{"newest events and report.json deleted", func(t *testing.T, c Campaign, s *store.Store) {
			mustExec(t, rawDB(t, c), "DELETE FROM events WHERE seq > (SELECT max(seq) - 3 FROM events)")
			if err := os.Remove(filepath.Join(c.Dir, "report.json")); err != nil {
				t.Fatal(err)
			}
		}, "report.json: missing"},
		{"frozen contract changed", func(t *testing.T, c Campaign, s *store.Store) {
			mustExec(t, rawDB(t, c), `UPDATE study SET contract_json = replace(contract_json, '"completion_policy":"answer"', '"completion_policy":"repair"')`)
		}, "frozen contract: the stored contract differs from the one the study_created event recorded (fields [completion_policy])"},
		{"review packet edited", func(t *testing.T, c Campaign, s *store.Store) {
			paths, _ := filepath.Glob(filepath.Join(c.Supervisor(), "review-*", PacketFile))
			if len(paths) != 1 {
				t.Fatalf("packets kept: %v, want one", paths)
			}
			writeFileT(t, paths[0], `{"claim_id":"root","experiments":[]}`)
		}, "the packet it was judged from changed"},
		{"report.json names an event the log does not hold", func(t *testing.T, c Campaign, s *store.Store) {
			path := filepath.Join(c.Dir, "report.json")
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var rep map[string]any
			if err := json.Unmarshal(body, &rep); err != nil {
				t.Fatal(err)
			}
			rep["event_head"].(map[string]any)["hash"] = strings.Repeat("0", 64)
			b, _ := json.Marshal(rep)
			writeFileT(t, path, string(b))
		}, "differs from the one report.json recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, s := intactFinishedStudy(t)
			tt.tamper(t, c, s)
			f, err := Verify(context.Background(), c, s)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(f, "\n"), tt.want) {
				t.Errorf("findings after %s:\n%s\nwant one containing %q", tt.name, strings.Join(f, "\n"), tt.want)
			}
		})
	}
}

// TestVerifyReportsMalformedStore corrupts the root page of the events
// table: verify must report SQLite's finding, not fail.
func TestVerifyReportsMalformedStore(t *testing.T) {
	t.Parallel()
	c, s := finishedStudy(t)
	var root, pageSize int64
	db := rawDB(t, c)
	if err := db.QueryRow("SELECT rootpage FROM sqlite_master WHERE name = 'events'").Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	// Every page in the main file, none in the write-ahead log.
	mustExec(t, db, "PRAGMA wal_checkpoint(TRUNCATE)")
	_ = db.Close()
	_ = s.Close()
	f, err := os.OpenFile(c.DB(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 64)), (root-1)*pageSize); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	s, err = c.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	findings, err := Verify(context.Background(), c, s)
	if err != nil {
		t.Fatalf("verify of a malformed store failed instead of reporting it: %v", err)
	}
	t.Logf("findings on a malformed store: %q", findings)
	if len(findings) == 0 || !strings.HasPrefix(findings[0], "store: SQLite") {
		t.Errorf("findings %q, want SQLite's integrity finding", findings)
	}
}

// TestCheckClaims covers the rule on its own: a claim's status is the
// disposition of its last approved verdict, open while none has.
func TestCheckClaims(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		claims   map[string]string // id → status
		accepted map[string]string // id → last approved disposition
		want     []string
	}{
		{"root open, no verdict", map[string]string{"root": "open"}, nil, nil},
		{"root falsified by its verdict", map[string]string{"root": "falsified"}, map[string]string{"root": "falsified"}, nil},
		{"root supported with no verdict", map[string]string{"root": "supported"}, nil,
			[]string{"claim root is supported, but no verdict accepted it (it should be open)"}},
		{"verdict overridden", map[string]string{"root": "supported"}, map[string]string{"root": "falsified"},
			[]string{"claim root is supported, but the last accepted verdict says falsified"}},
		{"accepted claim removed", map[string]string{"root": "falsified"}, map[string]string{"root": "falsified", "c1": "supported"},
			[]string{"claim c1, accepted by a verdict, is missing from the record"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var claims []Claim
			for _, id := range sortedKeys(tt.claims) {
				claims = append(claims, Claim{ID: id, Status: tt.claims[id]})
			}
			got := checkClaims(claims, tt.accepted)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func firstReceipt(t *testing.T, s *store.Store) Receipt {
	t.Helper()
	var exps []Receipt
	err := s.Read(context.Background(), func(tx *store.Tx) error {
		var err error
		exps, err = listDocs[Receipt](tx, store.Experiments)
		return err
	})
	if err != nil || len(exps) == 0 {
		t.Fatalf("no receipt (%v)", err)
	}
	return exps[0]
}

func writeFileT(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
