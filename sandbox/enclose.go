package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// The record enclosure: an agent's processes see the host read-only but
// for the folders an agent's tools write — its home, /tmp, /var/tmp, /dev
// (with /dev/shm) and $XDG_RUNTIME_DIR — and the campaign folder is
// read-only to them but for the folders they work in. It protects the
// study's record (the store, the artifacts, the reports) and every program
// the study runs later outside an enclosure (bwrap, the interpreters the
// experiments and the reviewer run, this binary) from the agent; it is not
// a sandbox for the agent, which keeps its tools, home, network and /tmp.
// The host is read-only, not only the campaign folder: a root agent keeps
// its owner's write access to the system's files with every capability
// dropped, and a bwrap or python3 it rewrote would run as the supervisor
// (or in every experiment) outside its enclosure.
//
// The launch line is
//
//	SELF __agent-guard PID bwrap BWRAP --ro-bind / / --dev-bind /dev /dev
//	   --bind H H … --ro-bind DIR DIR --bind W W … --ro-bind P P …
//	   --unshare-pid --proc /proc --cap-drop ALL --die-with-parent
//	   -- SELF __enclosed-exec ARGV…
//
// where PID is the supervisor's, H the host folders above, W the
// campaign's folders the launch works in and P the study's programs
// (WithPrograms) and the settings it reads outside (WithSettings),
// read-only even inside a writable folder. The guard
// (guard.go), bwrap, its init and
// the agent stay in the process group the caller gave the launcher, so
// signals to the group reach the agent. bwrap dies on SIGTERM and would
// take the agent with it at once (die-with-parent), cutting the grace an
// agent has to save its session; so the guard ignores SIGTERM, bwrap
// inherits that, and our own binary, exec'd last inside, restores the
// default before it execs the agent (a Go program handles SIGTERM from its
// start, and exec resets handled signals). A SIGKILL to the group kills
// bwrap; the pid namespace dies with it, so the agent's descendants, setsid
// ones included, die too. When the supervisor dies, the guard kills what is
// below it, bwrap's init included when bwrap died before arming its init's
// parent-death signal. The pid namespace and the fresh /proc also keep
// the agent from reaching the host's mount namespace through
// /proc/PID/root of a process of the same account, and --cap-drop ALL keeps
// a root agent from remounting the folder.

// pathsToPin are the folders strictly between a folder of open and each
// of paths (its parent folders below that folder), shallowest first,
// without repeats.
func pathsToPin(paths, open []string) []string {
	var out []string
	for _, p := range paths {
		var chain []string
		for d := filepath.Dir(filepath.Clean(p)); d != "/" && d != "."; d = filepath.Dir(d) {
			if slices.ContainsFunc(open, func(h string) bool { return strings.HasPrefix(d, h+"/") }) {
				chain = append(chain, d)
			}
		}
		slices.Reverse(chain)
		for _, d := range chain {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// hostWritable are the host's folders an enclosed agent may write: its
// home, the temporary folders and the runtime folder, those that exist as
// folders (not "/"), without repeats.
func hostWritable() []string {
	home, _ := os.UserHomeDir()
	var out []string
	for _, d := range []string{home, os.TempDir(), "/tmp", "/var/tmp", os.Getenv("XDG_RUNTIME_DIR")} {
		if d == "" || !filepath.IsAbs(d) || filepath.Clean(d) == "/" || slices.Contains(out, filepath.Clean(d)) {
			continue
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// EnclosedArg is the hidden mode, dispatched by main before anything else,
// that execs its arguments with SIGTERM at its default.
const EnclosedArg = "__enclosed-exec"

// Enclosure builds enclosed launch lines; the zero value encloses nothing.
type Enclosure struct {
	bwrap    string   // the bwrap executable; "" when the probe failed
	self     string   // this binary, for EnclosedArg
	open     []string // the host folders left writable (hostWritable)
	programs []string // files bound read-only besides (WithPrograms)
	settings []string // files and folders bound read-only besides (WithSettings)
	hidden   []string // files and folders hidden (WithHidden)
}

// WithPrograms returns e that also binds the files at paths read-only
// (the programs the study runs outside this enclosure later: an agent
// kept its host, but not these); a path that is not a regular file now is
// left out.
func (e Enclosure) WithPrograms(paths ...string) Enclosure {
	e.programs = nil
	for _, p := range paths {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			e.programs = append(e.programs, p)
		}
	}
	return e
}

// WithSettings returns e that also binds the files and folders at paths
// read-only: the settings the study reads outside this enclosure later
// (the ssh client's, the worker profiles). A path that does not exist now
// is left out, and a symlink is bound where it leads (the supervisor checks
// before every launch that it still leads there: the link itself stays in a
// folder the agent may write).
func (e Enclosure) WithSettings(paths ...string) Enclosure {
	e.settings = e.bindable(paths)
	return e
}

// WithHidden returns e that also hides the files and folders at paths
// from the agent: an empty folder over each folder, an empty file over
// each file (the ssh master's control sockets, through which a process of
// the account could run commands on a worker as the supervisor, and the
// key it logs in with). A path that does not exist now, or that holds a
// folder the agent may write, is left out.
func (e Enclosure) WithHidden(paths ...string) Enclosure {
	e.hidden = e.bindable(paths)
	return e
}

// bindable are paths resolved (symlinks followed), without repeats, those
// that are now a file or a folder and hold no folder the agent may write
// (a settings folder set to the home would take its home away).
func (e Enclosure) bindable(paths []string) []string {
	var out []string
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || !filepath.IsAbs(real) || slices.Contains(out, real) ||
			slices.ContainsFunc(e.open, func(h string) bool { return within(h, real) }) {
			continue
		}
		if st, err := os.Stat(real); err == nil && (st.Mode().IsRegular() || st.IsDir()) {
			out = append(out, real)
		}
	}
	return out
}

// ProbeEnclosure probes Bubblewrap once; the enclosure is available where
// the probe passes. self is this binary (the guard's, in any case).
func ProbeEnclosure(ctx context.Context, self string) Enclosure {
	if self == "" || !Probe(ctx, Bubblewrap).Available {
		return Enclosure{self: self}
	}
	bwrap, err := bwrapPath()
	if err != nil {
		return Enclosure{self: self}
	}
	return Enclosure{bwrap: bwrap, self: self, open: hostWritable()}
}

// Available reports whether the enclosure can be used.
func (e Enclosure) Available() bool { return e.bwrap != "" }

// Guard returns argv under the agent guard (guard.go) alone, not
// enclosed; without our binary's path it returns argv as it is.
func (e Enclosure) Guard(argv []string) []string {
	if e.self == "" || len(argv) == 0 {
		return argv
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return argv // starting it fails as it would unguarded
	}
	return append([]string{e.self, GuardArg, strconv.Itoa(os.Getpid()), GuardDirect, path}, argv[1:]...)
}

// Wrap returns argv enclosed, under the agent guard: readOnly is read-only
// to it except the folders in writable. Without an enclosure it returns
// argv under the guard alone.
func (e Enclosure) Wrap(readOnly string, writable []string, argv []string) []string {
	if !e.Available() || len(argv) == 0 {
		return e.Guard(argv)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return argv // starting it fails as it would unenclosed
	}
	out := []string{e.self, GuardArg, strconv.Itoa(os.Getpid()), GuardEnclosed, e.bwrap,
		"--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev"}
	for _, h := range e.open {
		out = append(out, "--bind", h, h)
	}
	// Every folder between a writable host folder and the campaign folder
	// or a program is bound onto itself: a mount point cannot be renamed,
	// so the agent cannot move one aside and put a copy of its own at the
	// path the supervisor later opens by name.
	// A settings folder that holds the campaign (settings kept under the
	// studies' folder) is bound read-only before the campaign, so that the
	// campaign's writable folders stay writable inside it.
	all := append(append(slices.Clone(e.programs), e.settings...), e.hidden...)
	holders := slices.DeleteFunc(slices.Clone(all), func(p string) bool { return !within(readOnly, p) })
	pinned := slices.DeleteFunc(all, func(p string) bool { return within(readOnly, p) })
	for _, a := range pathsToPin(append([]string{readOnly}, all...), e.open) {
		out = append(out, "--bind", a, a)
	}
	for _, h := range holders {
		out = append(out, "--ro-bind", h, h)
	}
	out = append(out, "--ro-bind", readOnly, readOnly) // after the host's: a campaign in /tmp stays read-only
	for _, w := range writable {
		out = append(out, "--bind", w, w)
	}
	for _, p := range pinned { // after the writable folders: read-only even inside one
		out = append(out, "--ro-bind", p, p)
	}
	for _, h := range e.hidden { // last: over what binds them
		if within(readOnly, h) {
			continue
		}
		if st, err := os.Stat(h); err == nil && st.IsDir() {
			out = append(out, "--tmpfs", h, "--remount-ro", h)
		} else {
			out = append(out, "--ro-bind", os.DevNull, h)
		}
	}
	out = append(out, "--unshare-pid", "--proc", "/proc", "--cap-drop", "ALL", "--die-with-parent",
		"--", e.self, EnclosedArg, path)
	return append(out, argv[1:]...)
}

// EnclosedMain is the EnclosedArg mode: it execs args[0] (looked up on
// PATH) with args and the environment as they are. Go handles SIGTERM from
// its start, so the exec resets it to the default the launcher ignored.
func EnclosedMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "simjecture: "+EnclosedArg+" needs a program")
		return 2
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "simjecture: start agent %s: %v\n", args[0], err)
		return 127
	}
	err = syscall.Exec(path, args, os.Environ())
	fmt.Fprintf(os.Stderr, "simjecture: start agent %s: %v\n", args[0], err)
	return 126
}
