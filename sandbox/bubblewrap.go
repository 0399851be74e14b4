package sandbox

import (
	"cmp"
	"context"
	"path/filepath"
	"strconv"
	"strings"
)

// The bubblewrap backend: kernel namespaces through bwrap.

// bwrapPath finds bwrap: $SIMJECTURE_BWRAP, else "bwrap" on PATH.
func bwrapPath() (string, error) { return launcherPath(EnvBwrap, "bwrap") }

func probeBubblewrap(ctx context.Context) Report {
	r := Report{Backend: Bubblewrap, KernelIsolation: true, NetworkIsolation: true}
	bwrap, err := bwrapPath()
	if err != nil {
		r.Reason, r.Remedy = "Missing bubblewrap executable", "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
		return r
	}
	// No --die-with-parent: bwrap arms it only after cloning its child,
	// which then waits in eventfd_read for the launcher; a host killed in
	// between would leave that child blocked forever under init. The probe
	// ends by itself (true), so it needs no parent-death signal.
	r.Available, r.Reason = runProbe(ctx, bwrap, "--unshare-all", "--ro-bind", "/", "/", "/usr/bin/true")
	if !r.Available {
		r.Remedy = RemedyBubblewrap
	}
	return r
}

// launchBubblewrap runs bwrap with the full command line; bwrap holds its
// child until the limits are set (bwrapgate.go).
func launchBubblewrap(s Spec, lay layout, cfg *helperConfig) error {
	bwrap, err := bwrapPath()
	if err != nil {
		return err
	}
	cfg.ASLimit = uint64(s.MemoryBytes + bubblewrapASHeadroom)
	cfg.BwrapGate, cfg.Shm = true, true
	v, err := etcCopies.acquire(filepath.Dir(lay.run))
	if err == nil {
		cfg.release = func() { etcCopies.release(v) }
	}
	cfg.Argv, cfg.Env = bwrapArgv(bwrap, s, lay, v), []string{"PATH=/usr/bin:/bin"}
	return nil
}

// bwrapArgv is the full Bubblewrap command line for s. etc is the prepared
// view (etcview.go): the root view, bound at / (rootview.go), unless s has
// read-only mounts; then a tmpfs at /, with the view's etc/ bound at /etc
// and its large folders over it. nil binds the host's etcItems one by one
// on the tmpfs instead.
func bwrapArgv(bwrap string, s Spec, lay layout, etc *etcView) []string {
	a := []string{bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL"}
	if etc != nil && len(s.ReadOnly) == 0 {
		a = append(a, rootViewArgs(etc)...)
	} else {
		a = append(a, tmpfsRootArgs(etc)...)
	}
	a = append(a, shmArgs(s)...)
	a = append(a, "--proc", "/proc",
		"--bind", lay.tmp, VirtualTmp, "--bind", lay.work, VirtualWork)
	for _, m := range s.ReadOnly {
		a = append(a, "--ro-bind", m.Host, m.Virtual)
	}
	a = append(a, "--chdir", VirtualWork)
	for _, kv := range envList(sandboxEnv(s)) {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	return append(append(a, "--"), s.Command...)
}

// tmpfsRootArgs builds / on a tmpfs: /etc (etc's etc/, or the items one by
// one where etc is nil), the system view and /dev.
func tmpfsRootArgs(etc *etcView) []string {
	a := []string{"--size", viewTmpfsBytes, "--tmpfs", "/"}
	view := baseView()
	if etc != nil {
		a = append(a, "--ro-bind", etc.dir, "/etc")
		for _, p := range etc.binds {
			a = append(a, "--ro-bind", p, "/etc/"+filepath.Base(p))
		}
	} else {
		a = append(a, "--dir", "/etc")
		view = append(view, etcEntries()...)
	}
	for _, e := range view {
		if e.symlink != "" {
			a = append(a, "--symlink", e.symlink, e.dst)
		} else {
			a = append(a, "--ro-bind", e.src, e.dst)
		}
	}
	return append(a, devArgs(etc)...)
}

// viewTmpfsBytes caps the tmpfs at / and the one at /dev (as a --size
// argument). Their pages are memory no process maps, which the watchdog
// does not count: bwrap's own root tmpfs and --dev's were each half the
// RAM, written freely by the experiment. Mount points and links use none.
const viewTmpfsBytes = "1048576"

// devNodes are the host devices an experiment's /dev holds.
var devNodes = []string{"null", "zero", "full", "urandom"}

// devArgs makes the tmpfs root's /dev: a tmpfs of viewTmpfsBytes holding
// devNodes (bound from the host), random as a link to urandom (the same
// generator since Linux 5.6, once it is seeded at boot), and the fd links
// (devLinks). There is no tty (the experiment runs in a session of its
// own, without a terminal) and no devpts. bwrap's --dev would bind tty and
// random too and mount a devpts: every bind costs bwrap a read of the
// whole mount table, 60–80 µs on the AMD EPYC host of session 11, where
// these two binds were 0.1–0.2 ms of a 3.5 ms bare launch.
//
// Where the view's dev/ holds devices, it is bound instead, as on the root
// view: the host's devices belong to root, and an experiment of a host
// running as root, uid 0 in its user namespace, could change their modes
// (chmod /dev/null 0 did, until session 15).
func devArgs(etc *etcView) []string {
	if etc != nil && etc.devices {
		return []string{"--dev-bind", filepath.Join(etc.root, "dev"), "/dev"}
	}
	a := []string{"--size", viewTmpfsBytes, "--tmpfs", "/dev"}
	for _, d := range devNodes {
		a = append(a, "--dev-bind", "/dev/"+d, "/dev/"+d)
	}
	for _, l := range devLinks {
		a = append(a, "--symlink", l[1], "/dev/"+l[0])
	}
	return a
}

// shmArgs mounts the experiment's /dev/shm: a tmpfs of its own, capped at
// the run's memory limit (its pages are memory; shm.go counts them), or,
// with no memory limit, at the workspace limit; never unbounded (a tmpfs
// of size 0 would be).
func shmArgs(s Spec) []string {
	size := cmp.Or(s.MemoryBytes, s.WorkspaceBytes, DefaultMemoryBytes)
	return []string{"--perms", "1777", "--size", strconv.FormatInt(size, 10), "--tmpfs", "/dev/shm"}
}
