package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	if err := checkLockedDir(c); err != nil {
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
func checkNewCampaign(c Campaign) error {
	err := checkNewCampaignDir(c.Dir)
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
		return false, campaignUnusable(dir, "cannot create it", fmt.Errorf("create %s: %w", filepath.Dir(dir), err))
	}
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrExist):
		return false, nil
	}
	return false, campaignUnusable(dir, "cannot create it", fmt.Errorf("create %s: %w", dir, err))
}

// checkLockedDir refuses, under the lock, a folder another process filled
// meanwhile: one that holds a study now, or anything but the lock file.
func checkLockedDir(c Campaign) error {
	if c.Exists() {
		return fmt.Errorf("%s already holds a study: %w", c.Dir, ErrInvalid)
	}
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return fmt.Errorf("campaign %s: %w", c.Dir, err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(c.LockFile()) {
			return fmt.Errorf("campaign %s is a non-empty folder that holds no study: %w", c.Dir, ErrInvalid)
		}
	}
	return nil
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
