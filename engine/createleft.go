package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/simjecture/simjecture/store"
)

// What a creation killed before it finished leaves (docs/campaign.md,
// "Creating a study"). A study exists only once its store, holding its
// study row, is renamed to DIR/simjecture.db; before that the folder may
// hold the lock file, the operator's files, empty folders and the
// temporary store, and nothing else. A later `study` removes exactly those
// leftovers and creates the study; the readers say the creation was
// interrupted.

// ErrCreationInterrupted marks a folder that holds only the leftovers of an
// interrupted creation: no study, and `study` may create one in it.
var ErrCreationInterrupted = errors.New("the creation of its study was interrupted; run simjecture study with the hypothesis and instructions again")

// tempStoreName is the store a creation writes before renaming it to
// storeName.
const tempStoreName = ".simjecture-creating.db"

// sqliteSuffixes are the files SQLite keeps beside a store.
var sqliteSuffixes = []string{"", "-wal", "-shm", "-journal"}

// leftoverDirs are the folders a creation makes, each with the entries it
// may hold: named files, or named folders holding only regular files and
// folders (a continuation's snapshot and inherited files).
var leftoverDirs = map[string]struct{ files, trees []string }{
	"operator":    {files: []string{"hypothesis.txt", "instructions.txt"}, trees: []string{"continuation"}},
	"research":    {trees: []string{"inherited"}},
	"experiments": {},
	"supervisor":  {},
}

// interrupted wraps ErrCreationInterrupted (and ErrInvalid) for c.
func (c Campaign) interrupted() error {
	return fmt.Errorf("%s: %w: %w", c.Dir, ErrCreationInterrupted, ErrInvalid)
}

// leftovers reports whether c holds only what an interrupted creation
// leaves (an empty folder included) and returns those entries, the lock
// file excepted. A store named simjecture.db counts only when it holds no
// study row and no event (a creation killed before this fix).
func (c Campaign) leftovers(ctx context.Context) ([]string, bool, error) {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return nil, false, fmt.Errorf("campaign %s: %w", c.Dir, err)
	}
	var found []string
	for _, e := range entries {
		ok, err := c.isLeftover(e)
		if err != nil || !ok {
			return nil, false, err
		}
		if e.Name() != filepath.Base(c.LockFile()) {
			found = append(found, filepath.Join(c.Dir, e.Name()))
		}
	}
	if !c.Exists() {
		return found, true, nil
	}
	blank, err := store.IsBlank(ctx, c.DB())
	return found, blank, err
}

// isLeftover reports whether one entry of the campaign folder is one a
// creation makes, as it makes it.
func (c Campaign) isLeftover(e fs.DirEntry) (bool, error) {
	name := e.Name()
	if d, ok := leftoverDirs[name]; ok {
		return e.IsDir() && onlyEntries(filepath.Join(c.Dir, name), d.files, d.trees), nil
	}
	if !e.Type().IsRegular() {
		return false, nil
	}
	if name == filepath.Base(c.LockFile()) {
		return true, nil
	}
	for _, base := range []string{tempStoreName, storeName} {
		for _, s := range sqliteSuffixes {
			if name == base+s {
				return true, nil
			}
		}
	}
	return false, nil
}

// onlyEntries reports whether dir holds only regular files named in files
// and folders named in trees that hold only regular files and folders.
func onlyEntries(dir string, files, trees []string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch {
		case e.Type().IsRegular() && slices.Contains(files, e.Name()):
		case e.IsDir() && slices.Contains(trees, e.Name()) && plainTree(filepath.Join(dir, e.Name())):
		default:
			return false
		}
	}
	return true
}

// plainTree reports whether dir holds only regular files and folders.
func plainTree(dir string) bool {
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return fs.ErrInvalid
		}
		return nil
	})
	return err == nil
}

// clearLeftovers removes the leftovers of an interrupted creation, found
// under the lock; it refuses a folder that holds anything else.
func (c Campaign) clearLeftovers(ctx context.Context) error {
	found, ok, err := c.leftovers(ctx)
	if err != nil {
		return err
	}
	switch {
	case !ok && c.Exists():
		return fmt.Errorf("%s already holds a study: %w", c.Dir, ErrInvalid)
	case !ok:
		return fmt.Errorf("campaign %s is a non-empty folder that holds no study: %w", c.Dir, ErrInvalid)
	}
	for _, p := range found {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("remove what an interrupted creation left: %w", err)
		}
	}
	return nil
}

// NoStudy is the error of a reader given a campaign folder without a
// store: ErrCreationInterrupted when it holds only the leftovers of a
// creation (and no live process is creating a study in it), else a folder
// that holds no study.
func (c Campaign) NoStudy(ctx context.Context) error {
	if _, ok, err := c.leftovers(ctx); err == nil && ok && hasEntries(c.Dir) && !Owned(c) {
		return c.interrupted()
	}
	return fmt.Errorf("%s holds no simjecture study: %w", c.Dir, ErrInvalid)
}

func hasEntries(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}
