package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCloseLeavesNoJournal cancels a read in the middle of its transaction
// (database/sql then rolls it back on a goroutine of its own, after the
// read has returned) and closes the store at once, as a supervisor that
// stops does before it exits. Only the last connection to close removes
// the WAL and its index, so Close must not return before every connection
// has: simjecture.db-wal and -shm left behind make the study unreadable to
// an account that cannot write its folder (one study in about 100 kept them).
func TestCloseLeavesNoJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "simjecture.db")
	for i := range 100 {
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		err = s.Read(ctx, func(tx *Tx) error {
			if _, err := tx.GetControl(); err != nil {
				return err
			}
			cancel()
			for { // until database/sql has taken the transaction over
				if _, err := tx.GetControl(); err != nil {
					return err
				}
			}
		})
		if err == nil {
			t.Fatal("a cancelled read succeeded")
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for _, suffix := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("iteration %d: %s is left after Close (%v)", i, filepath.Base(path+suffix), err)
			}
		}
	}
}
