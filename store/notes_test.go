package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestMigrationKeepsOldNotes opens a store written at schema version 2,
// before notes had kinds, and reads its note back.
func TestMigrationKeepsOldNotes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "simjecture.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"migrations/0001_init.sql", "migrations/0002_experiments_seq.sql"} {
		body, err := migrations.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			t.Fatal(err)
		}
	}
	old := `{"id":0,"statement":"written before kinds","created_at":"2026-01-01T00:00:00Z"}`
	for _, q := range []string{"INSERT INTO notes (note_json) VALUES ('" + old + "')", "PRAGMA user_version = 2"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Tx(ctx, func(tx *Tx) error {
		if _, err := tx.AddNote("question", 1, []byte(`{"statement":"a correction"}`)); err != nil {
			return err
		}
		all, err := tx.PageNotes("", 10, 0)
		if err != nil || len(all) != 2 || all[1].Seq != 1 || all[1].Kind != "" || string(all[1].JSON) != old {
			t.Errorf("notes after migration %+v, %v; want the old note unchanged under the new one", all, err)
		}
		next, err := tx.Successors([]int64{1})
		if err != nil || next[1] != 2 {
			t.Errorf("successors %v, %v; want note 1 superseded by 2", next, err)
		}
		if _, err := tx.AddNote("question", 1, []byte(`{}`)); err == nil {
			t.Error("a second successor of note 1 was recorded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
