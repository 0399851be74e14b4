package engine

import (
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
	f, err := os.OpenFile(c.LockFile(), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		_ = f.Close()
		if err == unix.EAGAIN || err == unix.EACCES {
			return nil, fmt.Errorf("%s: %w", c.Dir, ErrLocked)
		}
		return nil, fmt.Errorf("take lock: %w", err)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return &Lock{f: f}, nil
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
