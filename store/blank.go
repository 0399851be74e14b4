package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
)

// sqliteHeader begins every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// isSQLite reports whether the file at path is empty or begins as a SQLite
// database does.
func isSQLite(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("open store: %w", err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, head)
	if n == 0 && errors.Is(err, io.EOF) {
		return true, nil
	}
	return err == nil && bytes.Equal(head, sqliteHeader), nil
}

// IsBlank reports, writing nothing, whether the file at path is a store
// that never recorded anything: an empty file (a store opened and never
// written), a SQLite database with no table at all (its first migration
// never committed), or one whose tables are all the store's own, with no
// study row and no event. Any other file — another program's database
// included — is not blank.
func IsBlank(ctx context.Context, path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("open store: %w", err)
	}
	if ok, err := isSQLite(path); err != nil || !ok || st.Size() == 0 {
		return ok, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(15000)")
	if err != nil {
		return false, fmt.Errorf("open store: %w", err)
	}
	defer db.Close()
	tables, err := tableNames(ctx, db)
	if err != nil {
		return false, err
	}
	if len(tables) == 0 {
		return true, nil
	}
	own, err := ownTables()
	if err != nil {
		return false, err
	}
	for _, t := range tables {
		if !own[t] {
			return false, nil // another program's database
		}
	}
	if !slices.Contains(tables, "study") || !slices.Contains(tables, "events") {
		return false, nil
	}
	var rows int64
	if err := db.QueryRowContext(ctx, blankQuery).Scan(&rows); err != nil {
		return false, fmt.Errorf("count study rows and events: %w", err)
	}
	return rows == 0, nil
}

// tableNames lists the tables of db, SQLite's own left out.
func tableNames(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
	if err != nil {
		return nil, fmt.Errorf("read store schema: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("read store schema: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

var createTable = regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?([A-Za-z_][A-Za-z0-9_]*)`)

// ownTables are the tables the store's migrations create.
func ownTables() (map[string]bool, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	own := map[string]bool{}
	for _, n := range names {
		body, err := migrations.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", n, err)
		}
		for _, m := range createTable.FindAllSubmatch(body, -1) {
			own[string(m[1])] = true
		}
	}
	return own, nil
}

const blankQuery = "SELECT (SELECT count(*) FROM study) + (SELECT count(*) FROM events)"

// Blank reports whether the store holds no study row and no event: a store
// whose study was never recorded.
func (s *Store) Blank(ctx context.Context) (bool, error) {
	var n int64
	if err := s.r.QueryRowContext(ctx, blankQuery).Scan(&n); err != nil {
		return false, fmt.Errorf("count study rows and events: %w", err)
	}
	return n == 0, nil
}
