package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/simjecture/simjecture/store"
)

// createLocked writes a new study in c under the campaign lock and returns
// the lock, still held. The folder is made first (noting whether this
// process made it), the lock taken before anything else is written, and
// the folder checked again under it: two processes creating the same
// study cannot both write it, and the one that loses writes nothing. On
// failure only what this process wrote is removed, and the folder only if
// this process made it.
func createLocked(ctx context.Context, c Campaign, ns newStudy) (*Lock, error) {
	made, err := makeCampaignDir(c.Dir)
	if err != nil {
		return nil, err
	}
	lock, err := AcquireLock(c)
	if err != nil {
		if made && !errors.Is(err, ErrLocked) {
			_ = os.Remove(c.Dir) // only if still empty
		}
		return nil, err
	}
	if err := checkLockedDir(ctx, c); err != nil {
		_ = lock.Release()
		return nil, err
	}
	if err := writeNewStudy(ctx, c, ns); err != nil {
		undoCreate(c, lock, made)
		return nil, err
	}
	return lock, nil
}

// checkNewCampaign is checkNewCampaignDir, told apart when the folder is
// not empty because another process is creating or running a study in it
// (it holds the lock), or has created one meanwhile.
func checkNewCampaign(ctx context.Context, c Campaign) error {
	err := checkNewCampaignDir(ctx, c.Dir)
	switch {
	case err == nil:
		return checkCreatable(c.Dir)
	case Owned(c):
		return fmt.Errorf("%s: %w", c.Dir, ErrLocked)
	case c.Exists():
		return fmt.Errorf("%s already holds a study: %w", c.Dir, ErrInvalid)
	}
	return err
}

// makeCampaignDir makes dir (and its parents) and reports whether this
// call made dir itself.
func makeCampaignDir(dir string) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return false, campaignPathError(dir, "cannot create it", fmt.Errorf("create %s: %w", filepath.Dir(dir), err))
	}
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrExist):
		return false, nil
	}
	return false, campaignPathError(dir, "cannot create it", fmt.Errorf("create %s: %w", dir, err))
}

// checkLockedDir refuses, under the lock, a folder another process filled
// meanwhile: one that holds a study now, or anything but the lock file and
// the leftovers of an interrupted creation, which it removes.
func checkLockedDir(ctx context.Context, c Campaign) error {
	return c.clearLeftovers(ctx)
}

// undoCreate removes what a failed creation wrote. The folder held only
// the lock file when the lock was taken, so every other entry is this
// process's; the lock file goes while the lock is held, and the folder
// only if this process made it (and nobody has put a file in it since).
func undoCreate(c Campaign, lock *Lock, made bool) {
	entries, _ := os.ReadDir(c.Dir)
	for _, e := range entries {
		if e.Name() != filepath.Base(c.LockFile()) {
			_ = os.RemoveAll(filepath.Join(c.Dir, e.Name()))
		}
	}
	_ = lock.unlinkHeld(c)
	if made {
		_ = os.Remove(c.Dir)
	}
}

// publishStore writes a new store under a temporary name in c (its
// migrations, then record in one transaction), runs then on it, closes it
// and renames it to c's store: the store appears whole or not at all. A
// closed WAL store leaves no -wal file; one left would hold committed
// pages the rename would not carry, so it fails the creation.
func publishStore(ctx context.Context, c Campaign, record func(*store.Tx) error, then func(*store.Store) error) error {
	tmp := filepath.Join(c.Dir, tempStoreName)
	for _, suf := range sqliteSuffixes {
		if err := os.Remove(tmp + suf); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove an old temporary store: %w", err)
		}
	}
	s, err := store.Open(ctx, tmp)
	if err != nil {
		return err
	}
	err = s.Tx(ctx, record)
	if err == nil {
		err = then(s)
	}
	if cerr := s.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close the new store: %w", cerr)
	}
	if err != nil {
		return err
	}
	if _, err := os.Lstat(tmp + "-wal"); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the new store %s kept its write-ahead log after closing (%v)", tmp, err)
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, c.DB()); err != nil {
		return fmt.Errorf("publish the new store: %w", err)
	}
	return syncFile(c.Dir)
}

// firstReportPrefix names the files a creation writes its first reports
// under before renaming them into place.
const firstReportPrefix = ".simjecture-creating-"

// writeFirstReports writes report.json and LEDGER.md of the study being
// created from its temporary store s, before the store is renamed into
// place: a study that exists has reports whose event head is its log's
// (verify checks it). The creation marker first lists them with their
// content, on top of planned, and the names they are written under first
// with any content, so a kill at any point leaves only what a later study
// takes over.
func writeFirstReports(ctx context.Context, c Campaign, s *store.Store, planned map[string][]byte) error {
	files, err := reportFiles(ctx, c, s)
	if err != nil {
		return err
	}
	all := maps.Clone(planned)
	var partial []string
	for _, f := range files {
		all[f.name] = f.body
		partial = append(partial, firstReportPrefix+f.name)
	}
	if err := writeCreationMarker(c, all, partial...); err != nil {
		return err
	}
	for _, f := range files {
		tmp := filepath.Join(c.Dir, firstReportPrefix+f.name)
		if err := os.WriteFile(tmp, f.body, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
		if err := os.Rename(tmp, filepath.Join(c.Dir, f.name)); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

// syncFile flushes a file or folder to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
