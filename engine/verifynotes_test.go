package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/store"
)

// studyWithNoteAndUsage is a study with one note, recorded by lab note,
// and one thread's token totals, recorded as the supervisor does.
func studyWithNoteAndUsage(t *testing.T) (Campaign, *store.Store) {
	t.Helper()
	c, s := newTestStudy(t, nil)
	ctx := context.Background()
	if _, err := (&Lab{C: c, S: s}).Note(ctx, NoteArgs{Statement: "n up to 40 agrees", Kind: NoteObservation}); err != nil {
		t.Fatal(err)
	}
	in, out := int64(120), int64(30)
	err := s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.PutUsage("thread-1", &in, &out); err != nil {
			return err
		}
		return appendEvent(tx, UsagePayload{Thread: "thread-1", InputTokens: &in, OutputTokens: &out})
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// verifyNotesAndUsage names each note or token-total row its events do
// not account for, and each recorded one that is gone.
func TestVerifyNotesAndUsageNameTamperedRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, sql, want string }{
		{"intact", "", ""},
		{"note forged", `INSERT INTO notes (note_json, kind) VALUES ('{"statement":"forged"}', '')`,
			"note 2: not in the event log (added outside the harness)"},
		{"note edited", `UPDATE notes SET note_json = replace(note_json, 'agrees', 'disagrees')`,
			"note 1: changed outside the harness"},
		{"note's kind column edited", `UPDATE notes SET kind = 'result'`, "note 1: changed outside the harness"},
		{"note's supersedes column edited", `UPDATE notes SET supersedes = 7`, "note 1: changed outside the harness"},
		{"note removed", `DELETE FROM notes`, "note 1: recorded in the event log but missing from the store"},
		{"usage forged", `INSERT INTO usage VALUES ('t', 1, 1)`, `usage of thread "t": not in the event log`},
		{"usage edited", `UPDATE usage SET input_tokens = 9`,
			`usage of thread "thread-1": token totals 9 in, 30 out; its last usage event says 120 in, 30 out`},
		{"usage made unknown", `UPDATE usage SET output_tokens = NULL`, "unknown out; its last usage event says 120 in, 30 out"},
		{"usage removed", `DELETE FROM usage`, `usage of thread "thread-1": recorded in the event log but missing from the store`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, s := studyWithNoteAndUsage(t)
			if tc.sql != "" {
				mustExec(t, rawDB(t, c), tc.sql)
			}
			var f []string
			err := s.Read(context.Background(), func(tx *store.Tx) error {
				var err error
				f, err = verifyNotesAndUsage(tx)
				return err
			})
			wantFinding(t, f, err, tc.want)
		})
	}
}

// TestVerifyNamesAForgedNoteOfAFinishedStudy: the audit's case, through
// Verify: a note inserted into a completed study's store.
func TestVerifyNamesAForgedNoteOfAFinishedStudy(t *testing.T) {
	t.Parallel()
	c, s := finishedStudy(t)
	db := rawDB(t, c)
	mustExec(t, db, `INSERT INTO notes (note_json, kind) VALUES ('{"statement":"forged"}', '')`)
	var id int64
	if err := db.QueryRow("SELECT max(seq) FROM notes").Scan(&id); err != nil {
		t.Fatal(err)
	}
	f, err := Verify(context.Background(), c, s)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("note %d: not in the event log (added outside the harness)", id)
	if got := strings.Join(f, "\n"); !strings.Contains(got, want) {
		t.Fatalf("findings %q; want %q", f, want)
	}
}

// verifyRecords holds every document table to its record events, the
// scientific modes' assignments included, and each row's status column
// (what listings filter on) to the status its event recorded.
func TestVerifyRecordsNamesTamperedDocuments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, sql, want string }{
		{"intact", "", ""},
		{"assignment edited", `UPDATE assignments SET assignment_json = replace(assignment_json, '"falsifier"', '"researcher"')`,
			"assignments asg_1 was changed outside the harness"},
		{"assignment forged", `INSERT INTO assignments (id, seq, status, assignment_json) VALUES ('asg_2', 2, 'active', '{}')`,
			"assignments asg_2 was changed outside the harness"},
		{"receipt's status column edited", `UPDATE experiments SET status = 'failed'`,
			"experiments exp_x was changed outside the harness"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, s := newTestStudy(t, nil)
			ctx := context.Background()
			err := s.Tx(ctx, func(tx *store.Tx) error {
				if _, err := putReceipt(tx, Receipt{ID: "exp_x", Status: ExpSucceeded}); err != nil {
					return err
				}
				return putAssignment(tx, Assignment{ID: "asg_1", Role: RoleFalsifier, Claim: RootClaim, Status: AssignmentActive})
			})
			if err == nil {
				err = WriteReports(ctx, c, s)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.sql != "" {
				mustExec(t, rawDB(t, c), tc.sql)
			}
			f, err := verifyRecords(ctx, c, s)
			wantFinding(t, f, err, tc.want)
		})
	}
}
