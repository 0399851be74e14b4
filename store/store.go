package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"syscall"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is one campaign's database: a single writer connection whose
// transactions are IMMEDIATE, and a pool of readers.
type Store struct {
	w    *sql.DB
	r    *sql.DB
	path string
}

func dsn(path string, immediate bool) string {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(15000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)"} {
		q.Add("_pragma", p)
	}
	if immediate {
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens the database at path, creating it if missing, and applies
// every embedded migration that has not run yet.
func Open(ctx context.Context, path string) (*Store, error) {
	w, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	w.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{w: w, r: r, path: path}
	if err := s.migrate(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// OpenExisting opens a database that must already exist: an empty file or
// a SQLite database (SQLite would make any other file one).
func OpenExisting(ctx context.Context, path string) (*Store, error) {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, ErrNoStudy)
	}
	if ok, err := isSQLite(path); err != nil || !ok {
		return nil, errors.Join(fmt.Errorf("%s is not a SQLite database: %w", path, ErrNoStudy), err)
	}
	return Open(ctx, path)
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// closeWait bounds how long Close waits for connections still in use.
const closeWait = 5 * time.Second

// Close closes both pools and waits (at most closeWait) until every
// connection has closed. database/sql closes a connection that is in use
// only when it is released, and a transaction whose context ended is rolled
// back on a goroutine of its own after its caller has returned; only the
// last connection to close checkpoints the WAL and removes
// simjecture.db-wal and -shm, so a process that exited after Close
// returned would leave them (and a reader that cannot write the folder
// could not open the store).
func (s *Store) Close() error {
	err := errors.Join(s.w.Close(), s.r.Close())
	deadline := time.Now().Add(closeWait)
	for s.w.Stats().OpenConnections+s.r.Stats().OpenConnections > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // database/sql tells no one when a released connection closes
	}
	return err
}

func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	return s.Tx(ctx, func(tx *Tx) error {
		var version int
		if err := tx.tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		for i := version; i < len(names); i++ {
			body, err := migrations.ReadFile(names[i])
			if err != nil {
				return fmt.Errorf("read migration: %w", err)
			}
			if _, err := tx.tx.ExecContext(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", names[i], err)
			}
		}
		if version > len(names) {
			return fmt.Errorf("store schema version %d is newer than this binary (%d)", version, len(names))
		}
		_, err := tx.tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(names)))
		return err
	})
}

// Tx runs fn in one IMMEDIATE transaction and commits it when fn returns
// nil. A full disk (SQLITE_FULL) also reads as a write of the store's file
// failing with ENOSPC, so callers can name the path and the free space.
func (s *Store) Tx(ctx context.Context, fn func(*Tx) error) error {
	return s.diskFull(run(ctx, s.w, fn))
}

// diskFull adds to err, when SQLite says the disk is full, a PathError of
// the store's file with ENOSPC.
func (s *Store) diskFull(err error) error {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_FULL {
		return err
	}
	return &fullError{err: err, file: &fs.PathError{Op: "write", Path: s.path, Err: syscall.ENOSPC}}
}

// fullError is SQLite's full-disk error that also unwraps to the store's
// file failing with ENOSPC; its message is SQLite's alone (one line).
type fullError struct {
	err  error
	file *fs.PathError
}

func (e *fullError) Error() string   { return e.err.Error() }
func (e *fullError) Unwrap() []error { return []error{e.err, e.file} }

// Read runs fn in one read transaction: a consistent snapshot.
func (s *Store) Read(ctx context.Context, fn func(*Tx) error) error {
	return run(ctx, s.r, fn)
}

func run(ctx context.Context, db *sql.DB, fn func(*Tx) error) (err error) {
	sqlTx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	tx := &Tx{ctx: ctx, tx: sqlTx}
	defer func() {
		if err != nil {
			_ = sqlTx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// LastSeq is the sequence number of the newest event, a cheap change counter:
// every change to the study appends an event.
func (s *Store) LastSeq(ctx context.Context) (int64, error) {
	var seq sql.NullInt64
	err := s.r.QueryRowContext(ctx, "SELECT max(seq) FROM events").Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("last event: %w", err)
	}
	return seq.Int64, nil
}

// Tx is one open transaction.
type Tx struct {
	ctx context.Context
	tx  *sql.Tx
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func notFound(what string, err error) error {
	if isNoRows(err) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}
