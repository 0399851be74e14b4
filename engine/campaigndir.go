package engine

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Whether this account can use the operator's campaign folder. A folder it
// cannot create or write in, or whose store it cannot read, is the
// operator's input: a FieldError of the campaign folder naming the folder
// and the reason, not a harness failure.

// storeName is the file name of a campaign's store, as messages name it.
const storeName = "simjecture.db"

// campaignUnusable is a FieldError of the campaign folder dir when err is
// a denied permission or a read-only file system; any other err is
// returned unchanged.
func campaignUnusable(dir, what string, err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) || (errno != syscall.EACCES && errno != syscall.EPERM && errno != syscall.EROFS) {
		return err
	}
	return badField(FieldCampaign, "%s: %s: %w", dir, what, errno)
}

// campaignPathError is the error of a campaign folder that could not be
// made or looked at (what says which): a FieldError of the campaign folder
// when the path cannot be a folder here (a file system such as /proc that
// makes none, a name too long, a file or a loop in the way) or this
// account may not use it; any other err (a full disk, an I/O error) is
// returned unchanged.
func campaignPathError(dir, what string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOENT, syscall.ENOTDIR, syscall.ENAMETOOLONG, syscall.ELOOP, syscall.EEXIST, syscall.EINVAL:
			return badField(FieldCampaign, "%s: %s: %w", Printable(dir), what, errno)
		}
	}
	return campaignUnusable(dir, what, err)
}

// checkNotFile refuses a campaign path that is a file, or has a file where
// a folder of its path should be: the same line for every command.
func checkNotFile(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return badField(FieldCampaign, "%s: is a file, not a campaign folder", Printable(dir))
	case errors.Is(err, syscall.ENOTDIR):
		return badField(FieldCampaign, "%s: a file is in its path, not a campaign folder", Printable(dir))
	}
	return nil
}

// checkCreatable refuses a new campaign folder this account cannot make
// (the nearest existing folder above it is not writable) or, when it
// exists, cannot write in; it writes nothing.
func checkCreatable(dir string) error {
	p, what := dir, "cannot write in it"
	for {
		_, err := os.Stat(p)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return campaignUnusable(dir, "cannot create it", err)
		}
		if filepath.Dir(p) == p {
			return nil
		}
		p, what = filepath.Dir(p), "cannot create it"
	}
	if err := unix.Access(p, unix.W_OK|unix.X_OK); err != nil {
		return campaignUnusable(dir, what, err)
	}
	return nil
}

// checkReadable refuses a campaign whose store exists but this account
// cannot read (a missing store is told apart by its callers).
func (c Campaign) checkReadable() error {
	f, err := os.Open(c.DB())
	switch {
	case err == nil:
		return f.Close()
	case errors.Is(err, os.ErrNotExist):
		return nil
	}
	return campaignUnusable(c.Dir, "cannot read its store "+storeName, err)
}

// openFailed explains a store that exists and is readable but did not
// open: a folder this account cannot write in (SQLite keeps its journal
// beside the store) is the operator's input; any other failure is err.
func (c Campaign) openFailed(err error) error {
	if aerr := unix.Access(c.Dir, unix.W_OK|unix.X_OK); aerr != nil {
		return campaignUnusable(c.Dir, "cannot write in it (the store "+storeName+" keeps its journal there)", aerr)
	}
	if aerr := unix.Access(c.DB(), unix.W_OK); aerr != nil {
		return campaignUnusable(c.Dir, "cannot write its store "+storeName, aerr)
	}
	return err
}
