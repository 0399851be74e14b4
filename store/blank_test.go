package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// TestIsBlank: only an empty file or a SQLite store with no study row and
// no event is blank, and looking writes nothing.
func TestIsBlank(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, path string)
		blank bool
	}{
		{"empty file", func(t *testing.T, p string) { writeTestFile(t, p, "") }, true},
		{"not a database", func(t *testing.T, p string) { writeTestFile(t, p, "x") }, false},
		{"migrated, nothing recorded", func(t *testing.T, p string) { openClose(t, p, nil) }, true},
		{"another program's database", func(t *testing.T, p string) { foreignDB(t, p) }, false},
		{"a study row", func(t *testing.T, p string) {
			openClose(t, p, func(tx *Tx) error { return tx.PutStudy(StudyRow{StudyID: "s", ContractJSON: []byte("{}")}) })
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "simjecture.db")
			tc.make(t, p)
			before, _ := os.ReadFile(p)
			got, err := IsBlank(ctx, p)
			if err != nil || got != tc.blank {
				t.Fatalf("IsBlank = %v, %v; want %v", got, err, tc.blank)
			}
			if after, _ := os.ReadFile(p); string(after) != string(before) {
				t.Errorf("IsBlank changed the file")
			}
			if tc.name == "another program's database" {
				return // OpenExisting would migrate it; IsBlank is what guards it
			}
			if _, err := OpenExisting(ctx, p); (err == nil) != (tc.name != "not a database") {
				t.Errorf("OpenExisting = %v", err)
			}
		})
	}
}

func writeTestFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func openClose(t *testing.T, p string, record func(*Tx) error) {
	t.Helper()
	s, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if record != nil {
		if err := s.Tx(context.Background(), record); err != nil {
			t.Fatal(err)
		}
	}
}

// foreignDB writes a SQLite database of another program: a table of ours
// is not in it, one of its own is, with rows.
func foreignDB(t *testing.T, p string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE mydata (x INTEGER)", "INSERT INTO mydata VALUES (1), (2), (3)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}
