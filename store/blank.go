package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
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
// written), or a SQLite database without the schema (its first migration
// never committed) or with no study row and no event. Any other file is
// not blank.
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
	var tables int
	q := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('study', 'events')"
	if err := db.QueryRowContext(ctx, q).Scan(&tables); err != nil {
		return false, fmt.Errorf("read store schema: %w", err)
	}
	if tables == 0 {
		return true, nil
	}
	var rows int64
	if err := db.QueryRowContext(ctx, blankQuery).Scan(&rows); err != nil {
		return false, fmt.Errorf("count study rows and events: %w", err)
	}
	return rows == 0, nil
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
