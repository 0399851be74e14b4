package engine

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Lock is the single-owner lock of a campaign: an open-file-description
// lock, released by the kernel when the owner dies, and queryable by readers
// without taking it.
type Lock struct{ f *os.File }

// AcquireLock takes the campaign lock or fails with ErrLocked.
func AcquireLock(c Campaign) (*Lock, error) {
	for range 3 {
		l, err := lockOnce(c)
		if l != nil || err != nil {
			return l, err
		}
	}
	return nil, fmt.Errorf("%s: the lock file keeps being replaced: %w", c.Dir, ErrLocked)
}

// lockOnce takes the lock on the file now at the lock path. It returns
// neither a lock nor an error when the file it locked was unlinked or
// replaced meanwhile (a creation that failed removes its lock file while
// holding it): a lock on a file no longer at the path guards nothing.
func lockOnce(c Campaign) (*Lock, error) {
	f, err := os.OpenFile(c.LockFile(), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, campaignUnusable(c.Dir, "cannot write in it", fmt.Errorf("open lock: %w", err))
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		_ = f.Close()
		if err == unix.EAGAIN || err == unix.EACCES {
			return nil, fmt.Errorf("%s: %w", c.Dir, ErrLocked)
		}
		return nil, fmt.Errorf("take lock: %w", err)
	}
	held, herr := f.Stat()
	now, nerr := os.Stat(c.LockFile())
	if herr != nil || nerr != nil || !os.SameFile(held, now) {
		_ = f.Close()
		return nil, nil
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return &Lock{f: f}, nil
}

// unlinkHeld removes the lock file while the lock is still held, so that
// no process can lock it afterwards believing it owns the campaign (see
// lockOnce), and then releases the lock.
func (l *Lock) unlinkHeld(c Campaign) error {
	err := os.Remove(c.LockFile())
	return errors.Join(err, l.Release())
}

// Release drops the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Owned reports whether a live process holds the campaign lock.
func Owned(c Campaign) bool {
	f, err := os.Open(c.LockFile())
	if err != nil {
		return false
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false
	}
	return lk.Type != unix.F_UNLCK
}
