package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// The /etc an experiment sees under Bubblewrap is one prepared folder, a
// copy of exactly the etcItems the host has, bound read-only at /etc with
// one --ro-bind. Binding each item on its own cost bwrap a mount, a
// read-only remount and a read of its mount table per item (about 0.6 ms
// of a 3.5 ms launch); the view shows the same names and bytes. An item
// folder with more than etcCopyMax entries (/etc/alternatives holds
// hundreds of symlinks) is still bound on its own over an empty folder of
// the view. Its bind costs every launch 0.03–0.14 ms on the AMD EPYC host
// of session 11 (a read of bwrap's mount table), but copying it made the
// first launch of every run-folder parent wait 47–52 ms (a new inode costs
// up to 0.8 ms on an ext4 without a journal that many files were recently
// deleted from): it would pay back only after about 500 launches.
//
// One view is kept per run-folder parent (a campaign's scratch folder,
// which agents cannot write) and checked before every launch: every source
// item, every folder and regular file inside one, and every copy must still
// have the device, inode, mode, size, mtime and ctime recorded when the view
// was made. A change on the host (or to a copy) gives a new view; the old
// one is removed once no launch holds it. Symlinks inside an item folder
// are covered by their folder's stamp (a symlink is replaced, never
// changed in place). Devices, FIFOs and sockets inside an item are not
// copied. Where a view cannot be made, the items are bound one by one as
// before.

// etcViewPrefix names a view folder in its parent.
const etcViewPrefix = ".etc-"

// etcCopyMax is the most entries an item folder may hold to be copied.
const etcCopyMax = 32

// etcViews holds the views of one host process.
type etcViews struct {
	mu       sync.Mutex
	src      string // the host's /etc; tests use a folder of their own
	byParent map[string]*etcView
}

// etcView is one prepared view and what it was made from.
type etcView struct {
	root    string   // the root view (rootview.go), holding dir
	dir     string   // root's etc/
	devices bool     // root's dev/ holds devices
	binds   []string // item folders bound on their own, as host paths
	users   int      // launches holding it
	stale   bool     // replaced: removed when the last user lets go
	host    []stamp
	own     []stamp
	watch   *stampWatch // nil: every check reads every stamp (etcwatch.go)
}

// stamp is what lstat said of path; ok is false when it did not exist.
type stamp struct {
	path       string
	ok         bool
	dev, ino   uint64
	mode       uint32
	size       int64
	mtim, ctim syscall.Timespec
}

var etcCopies = etcViews{src: "/etc", byParent: map[string]*etcView{}}

func stampOf(path string) stamp {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil {
		return stamp{path: path}
	}
	return stamp{path: path, ok: true, dev: st.Dev, ino: st.Ino, mode: st.Mode, size: st.Size, mtim: st.Mtim, ctim: st.Ctim}
}

// fresh reports whether every source and every copy is as recorded.
func (v *etcView) fresh() bool {
	if v.watch.quiet() {
		return true
	}
	for _, list := range [][]stamp{v.host, v.own} {
		for _, s := range list {
			if stampOf(s.path) != s {
				return false
			}
		}
	}
	return true
}

// acquire returns the fresh view for run folders under parent, made now
// if there is none; the caller hands it back with release.
func (e *etcViews) acquire(parent string) (*etcView, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := e.byParent[parent]
	if v != nil && v.fresh() {
		v.users++
		return v, nil
	}
	if v != nil {
		e.retire(v)
		delete(e.byParent, parent)
	}
	v, err := buildEtcView(e.src, folders.newName(parent, etcViewPrefix))
	if err != nil {
		return nil, err
	}
	e.byParent[parent] = v
	v.users++
	return v, nil
}

// release lets go of a view acquire returned.
func (e *etcViews) release(v *etcView) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v.users--
	if v.stale && v.users == 0 {
		v.remove()
	}
}

// remove closes the view's watch and removes its folder.
func (v *etcView) remove() {
	v.watch.close()
	removeTree(v.root)
}

// retire marks v replaced and removes it if no launch holds it; e.mu is held.
func (e *etcViews) retire(v *etcView) {
	v.stale = true
	if v.users == 0 {
		v.remove()
	}
}

// settle retires every view (Settle).
func (e *etcViews) settle() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for parent, v := range e.byParent {
		e.retire(v)
		delete(e.byParent, parent)
	}
}

// buildEtcView makes the root view in the new folder root: a copy of the
// etcItems of src in its etc/, then the rest (makeRoot).
func buildEtcView(src, root string) (*etcView, error) {
	if err := os.Mkdir(root, 0o700); err != nil {
		return nil, fmt.Errorf("etc view: %w", err)
	}
	v, err := fillEtcView(src, root)
	if err != nil {
		removeTree(root)
		return nil, fmt.Errorf("etc view: %w", err)
	}
	return v, nil
}

func fillEtcView(src, root string) (*etcView, error) {
	v := &etcView{root: root, dir: filepath.Join(root, "etc")}
	if err := os.Mkdir(v.dir, 0o700); err != nil {
		return nil, err
	}
	copies := []string{v.dir}
	for _, name := range etcItems {
		made, err := v.copyItem(filepath.Join(src, name), filepath.Join(v.dir, name), true)
		if err != nil {
			return nil, err
		}
		copies = append(copies, made...)
	}
	if err := os.Chmod(v.dir, 0o555); err != nil {
		return nil, err
	}
	own, devices, err := makeRoot(root)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(root, 0o555); err != nil {
		return nil, err
	}
	v.devices = devices
	for _, p := range append(copies, own...) {
		v.own = append(v.own, stampOf(p))
	}
	v.watch = watchStamps(append(slices.Clone(v.host), v.own...))
	return v, nil
}

// copyItem copies src to dst (a folder with what it holds) and returns the
// copies made other than symlinks. The source's stamp is taken first, so a
// change during the copy shows at the next check.
func (v *etcView) copyItem(src, dst string, top bool) ([]string, error) {
	st := stampOf(src)
	kind := st.mode & syscall.S_IFMT
	if top || kind != syscall.S_IFLNK {
		v.host = append(v.host, st)
	}
	if !st.ok {
		return nil, nil // not on this host: not shown (its absence is recorded)
	}
	perm := os.FileMode(st.mode & 0o777)
	switch kind {
	case syscall.S_IFLNK:
		t, err := os.Readlink(src)
		if err != nil {
			return nil, err
		}
		return nil, os.Symlink(t, dst)
	case syscall.S_IFREG:
		data, err := readNoFollow(src)
		if err == nil {
			err = os.WriteFile(dst, data, 0o600)
		}
		return []string{dst}, finishCopy(dst, perm, st, err)
	case syscall.S_IFDIR:
		made, err := v.copyFolder(src, dst, top)
		return append(made, dst), finishCopy(dst, perm, st, err)
	}
	return nil, nil // a device, FIFO or socket: not shown
}

// copyFolder makes dst and copies what src holds into it; an item folder
// (top) with more than etcCopyMax entries stays empty, to be bound over.
func (v *etcView) copyFolder(src, dst string, top bool) ([]string, error) {
	if err := os.Mkdir(dst, 0o700); err != nil {
		return nil, err
	}
	names, err := readDirNames(src)
	if err != nil {
		return nil, err
	}
	if top && len(names) > etcCopyMax {
		v.binds = append(v.binds, src)
		return nil, nil
	}
	var made []string
	for _, n := range names {
		m, err := v.copyItem(filepath.Join(src, n), filepath.Join(dst, n), false)
		if err != nil {
			return nil, err
		}
		made = append(made, m...)
	}
	return made, nil
}

// readNoFollow reads the file at path, never through a symlink put there
// since its lstat.
func readNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// finishCopy gives a copy its source's permission bits and times.
func finishCopy(dst string, perm os.FileMode, st stamp, err error) error {
	if err != nil {
		return err
	}
	mtime := time.Unix(st.mtim.Sec, st.mtim.Nsec)
	if err := os.Chmod(dst, perm); err != nil {
		return err
	}
	return os.Chtimes(dst, mtime, mtime)
}
