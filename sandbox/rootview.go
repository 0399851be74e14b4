package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The root view: the /etc view's folder (etcview.go) is the experiment's
// whole / under Bubblewrap, bound read-only with one --ro-bind. It holds
// etc/ (the copy of the etcItems), the top-level links and mount points of
// hostBaseView, empty proc/, tmp/ and work/ folders to mount on, and dev/.
// Built once per run-folder parent, it replaces a tmpfs at /, one at /dev,
// the /etc bind and eleven --symlink steps of every launch: 0.37 ms of a
// 7.5 ms launch line on the AMD EPYC host of session 15 (bare bwrap 5.5 ms).
//
// dev/ holds the fd links, a shm/ folder for the /dev/shm tmpfs and one
// entry per devNodes. Where the host process is root and the view's file
// system allows devices, each entry is a character device with the host
// device's number, and dev/ is bound with one --dev-bind (a read-only bind
// would forbid devices; bwrap cannot remount read-only without also
// forbidding them). That bind is writable at the mount, so dev/ and what it
// holds belong to noOwner, with dev/ at mode 0555: the experiment, uid 0
// without capabilities in a user namespace where noOwner is not mapped,
// can neither make, remove nor rename entries there, nor change their
// modes (it can still set their times, which only makes the next launch
// remake the view). This saves three of the four device binds: 0.50 ms
// more in the same measurement. Elsewhere (not root, a nodev file system)
// each entry is an empty file that the host's device is bound over.
//
// A run with read-only mounts (capabilities) keeps the tmpfs root, where
// bwrap can make their mount points.

// noOwner owns the view's /dev where it holds devices: (uid_t)-2, the
// highest valid uid, which no account holds on Debian. A host process
// running under it could only alter those entries, not make devices (that
// needs CAP_MKNOD).
const noOwner = 1<<32 - 2

// makeRoot fills dir, which already holds etc/, with the rest of the root
// view and returns the folders whose stamps the view keeps and whether
// dev/ holds devices.
func makeRoot(dir string) ([]string, bool, error) {
	for _, e := range hostBaseView() {
		if err := mountPoint(filepath.Join(dir, e.dst), e); err != nil {
			return nil, false, fmt.Errorf("root view: %w", err)
		}
	}
	for _, p := range []string{"/proc", VirtualTmp, VirtualWork} {
		if err := os.Mkdir(filepath.Join(dir, p), 0o755); err != nil {
			return nil, false, fmt.Errorf("root view: %w", err)
		}
	}
	dev := filepath.Join(dir, "dev")
	nodes := devicesAllowed(dir)
	err := makeDev(dev, nodes)
	if err != nil && nodes { // no device could be made here: empty files instead
		removeTree(dev)
		nodes, err = false, makeDev(dev, false)
	}
	if err != nil {
		return nil, false, fmt.Errorf("root view: %w", err)
	}
	return []string{dir, dev}, nodes, nil
}

// mountPoint makes what e needs at p: its symlink, or a folder or an empty
// file for its bind to cover.
func mountPoint(p string, e viewEntry) error {
	switch {
	case e.symlink != "":
		return os.Symlink(e.symlink, p)
	case e.dir:
		return os.Mkdir(p, 0o755)
	}
	return os.WriteFile(p, nil, 0o444)
}

// devicesAllowed reports whether devices made under dir would work there.
func devicesAllowed(dir string) bool {
	var fs unix.Statfs_t
	return os.Geteuid() == 0 && unix.Statfs(dir, &fs) == nil && fs.Flags&unix.ST_NODEV == 0
}

// devLinks are the symlinks of the experiment's /dev.
var devLinks = [][2]string{{"random", "urandom"}, {"fd", "/proc/self/fd"},
	{"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}}

// makeDev makes the view's dev/: devNodes as devices owned by noOwner
// (nodes) or as empty files, devLinks and shm/.
func makeDev(dev string, nodes bool) error {
	if err := os.Mkdir(dev, 0o755); err != nil {
		return err
	}
	made := []string{dev, filepath.Join(dev, "shm")}
	if err := os.Mkdir(made[1], 0o755); err != nil {
		return err
	}
	for _, l := range devLinks {
		made = append(made, filepath.Join(dev, l[0]))
		if err := os.Symlink(l[1], made[len(made)-1]); err != nil {
			return err
		}
	}
	for _, d := range devNodes {
		p := filepath.Join(dev, d)
		made = append(made, p)
		if err := devEntry(p, "/dev/"+d, nodes); err != nil {
			return err
		}
	}
	if !nodes {
		return os.Chmod(dev, 0o555)
	}
	for _, p := range made {
		if err := os.Lchown(p, noOwner, noOwner); err != nil {
			return err
		}
	}
	return os.Chmod(dev, 0o555)
}

// devEntry makes at p the device host is (nodes), or an empty file.
func devEntry(p, host string, nodes bool) error {
	if !nodes {
		return os.WriteFile(p, nil, 0o444)
	}
	var st unix.Stat_t
	if err := unix.Stat(host, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return fmt.Errorf("%s is not a character device", host)
	}
	if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(st.Rdev)); err != nil {
		return fmt.Errorf("mknod %s: %w", p, err)
	}
	return os.Chmod(p, 0o666) // the umask took bits from mknod's mode
}

// rootViewArgs mounts the root view v at / and what it does not hold: the
// item folders bound on their own, the folders of hostBaseView, and the
// devices where dev/ holds none.
func rootViewArgs(v *etcView) []string {
	a := []string{"--ro-bind", v.root, "/"}
	for _, p := range v.binds {
		a = append(a, "--ro-bind", p, "/etc/"+filepath.Base(p))
	}
	for _, e := range hostBaseView() {
		if e.symlink == "" {
			a = append(a, "--ro-bind", e.src, e.dst)
		}
	}
	if v.devices {
		return append(a, "--dev-bind", filepath.Join(v.root, "dev"), "/dev")
	}
	for _, d := range devNodes {
		a = append(a, "--dev-bind", "/dev/"+d, "/dev/"+d)
	}
	return a
}
