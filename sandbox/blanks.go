package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A spare run folder holds sealBlanks empty files beside work/, made on the
// background goroutine with the folder. Sealing renames one into place
// under the sealed file's name (openBlank) instead of making a new file.
// On an ext4 without a journal every new inode is checked against the
// inodes deleted in the last seconds, and a launch loop deletes several per
// run: making the copy took 0.2–0.8 ms on the AMD EPYC host of session 11
// where the rename takes tens of microseconds. A blank is used only if,
// opened without following a symlink, it is still a regular empty file
// with one link that nothing else holds open (a write lease can be taken
// on it: a process of the same account could otherwise have opened it, or
// mapped it, before it became the copy); otherwise it is removed and the
// copy made as before. The blanks a run did not use go with its folder
// (recycle makes new ones).
const sealBlanks = 2

// noLeases holds the run folders' parents whose file system takes no
// lease (NFS, FUSE, leases-enable 0): no blank can be used there, so
// none is made.
var noLeases sync.Map

// blank is the path of spare blank i of the run folder.
func (l layout) blank(i int) string {
	return filepath.Join(l.run, ".blank-"+strconv.Itoa(i))
}

// makeBlanks makes the run folder's blanks, never through a name already
// there.
func makeBlanks(lay layout) error {
	if _, off := noLeases.Load(filepath.Dir(lay.run)); off {
		return nil
	}
	var errs []error
	for i := range sealBlanks {
		f, err := os.OpenFile(lay.blank(i), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			err = f.Close()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// emptyPlainFile reports whether p (not followed) is a regular empty file
// with one link.
func emptyPlainFile(p string) bool {
	info, err := os.Lstat(p)
	return err == nil && info.Mode().IsRegular() && info.Size() == 0 && nlink(info) == 1
}

// blanks hands out a run folder's blanks, each at most once.
type blanks struct {
	lay  layout
	next int
}

// openBlank renames the next blank to dst (never over an existing file)
// and opens it for reading and writing. ok is false when no blank could be
// used; dst is then free again, but for a folder swapped in for the blank
// after its check and holding something (the copy then fails on it).
func (b *blanks) openBlank(dst string) (f *os.File, ok bool) {
	if b == nil || b.next >= sealBlanks {
		return nil, false
	}
	src := b.lay.blank(b.next)
	b.next++
	if !emptyPlainFile(src) { // checked again once opened: this only keeps a folder from being moved
		return nil, false
	}
	if unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE) != nil {
		return nil, false
	}
	f, err := os.OpenFile(dst, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err == nil {
		if info, serr := f.Stat(); serr == nil && info.Mode().IsRegular() && info.Size() == 0 && nlink(info) == 1 && b.heldByNoOther(f) {
			return f, true
		}
		_ = f.Close()
	}
	_ = os.Remove(dst) // not as made: it is not used, and dst is free again
	return nil, false
}

// heldByNoOther reports whether f's file is open through no other file
// description (a descriptor or a shared mapping elsewhere; an O_PATH handle
// does not count, and gives no more than the path gives the same account):
// a write lease can be taken on it only then. The lease is let go at once.
// A file system that takes no lease at all turns blanks off for the
// folder's parent.
func (b *blanks) heldByNoOther(f *os.File) bool {
	fd := int(f.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK); err != nil {
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EBUSY) {
			noLeases.Store(filepath.Dir(b.lay.run), true)
		}
		return false
	}
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
	return err == nil
}
