package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// viewEntry is one element of the read-only system view shared by the
// Bubblewrap and PRoot backends.
type viewEntry struct {
	symlink string // non-empty: recreate dst as a symlink to this target
	src     string // otherwise: bind src read-only at dst
	dst     string
	dir     bool
}

// etcItems are the only parts of /etc shown inside (never all of /etc:
// no /etc/shadow, no host credentials).
var etcItems = []string{
	"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
	"passwd", "group", "nsswitch.conf",
}

// systemView lists /usr, the top-level /bin, /sbin and /lib* (as symlinks
// where the host has them as symlinks) and a minimal /etc.
func systemView() []viewEntry {
	view := []viewEntry{{src: "/usr", dst: "/usr", dir: true}}
	for _, name := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		if e, ok := mirror("/" + name); ok {
			view = append(view, e)
		}
	}
	for _, name := range etcItems {
		if e, ok := mirror("/etc/" + name); ok {
			view = append(view, e)
		}
	}
	return view
}

func mirror(p string) (viewEntry, bool) {
	info, err := os.Lstat(p)
	if err != nil {
		return viewEntry{}, false
	}
	if info.Mode()&os.ModeSymlink != 0 {
		t, err := os.Readlink(p)
		return viewEntry{symlink: t, dst: p}, err == nil
	}
	return viewEntry{src: p, dst: p, dir: info.IsDir()}, true
}

// bwrapArgv is the full Bubblewrap command line for s.
func bwrapArgv(bwrap string, s Spec, lay layout) []string {
	a := []string{bwrap, "--unshare-all", "--die-with-parent", "--new-session",
		"--clearenv", "--cap-drop", "ALL", "--dir", "/etc"}
	for _, e := range systemView() {
		if e.symlink != "" {
			a = append(a, "--symlink", e.symlink, e.dst)
		} else {
			a = append(a, "--ro-bind", e.src, e.dst)
		}
	}
	a = append(a, "--dev", "/dev", "--proc", "/proc",
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

// prootArgv builds the private root folder and the PRoot command line.
func prootArgv(proot string, s Spec, lay layout) ([]string, error) {
	a := []string{proot, "-r", lay.root, "-w", VirtualWork}
	for _, d := range []string{"etc", "dev", "proc", "tmp", "work"} {
		if err := os.MkdirAll(filepath.Join(lay.root, d), 0o755); err != nil {
			return nil, fmt.Errorf("proot root: %w", err)
		}
	}
	for _, e := range systemView() {
		if err := prootEntry(lay.root, e); err != nil {
			return nil, err
		}
		if e.symlink == "" {
			a = append(a, "-b", e.src+":"+e.dst)
		}
	}
	a = append(a, "-b", "/dev:/dev", "-b", "/proc:/proc",
		"-b", lay.tmp+":"+VirtualTmp, "-b", lay.work+":"+VirtualWork+"!")
	for _, m := range s.ReadOnly {
		if err := os.MkdirAll(filepath.Join(lay.root, m.Virtual), 0o755); err != nil {
			return nil, fmt.Errorf("proot root: %w", err)
		}
		a = append(a, "-b", m.Host+":"+m.Virtual)
	}
	return append(a, s.Command...), nil
}

// prootEntry creates the mount point or symlink for e inside root.
func prootEntry(root string, e viewEntry) error {
	dst := filepath.Join(root, e.dst)
	var err error
	switch {
	case e.symlink != "":
		err = os.Symlink(e.symlink, dst)
	case e.dir:
		err = os.MkdirAll(dst, 0o755)
	default:
		err = os.WriteFile(dst, nil, 0o644)
	}
	if err != nil {
		return fmt.Errorf("proot root: %w", err)
	}
	return nil
}

// translator maps virtual paths to host paths for process-cooperative,
// longest virtual prefix first.
type translator [][2]string

func newTranslator(s Spec, lay layout) translator {
	t := translator{{VirtualWork, lay.work}, {VirtualTmp, lay.tmp}}
	for _, m := range s.ReadOnly {
		t = append(t, [2]string{m.Virtual, m.Host})
	}
	slices.SortStableFunc(t, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	return t
}

// path translates one path-like string.
func (t translator) path(p string) string {
	for _, m := range t {
		if within(p, m[0]) {
			return m[1] + p[len(m[0]):]
		}
	}
	return p
}

// value translates every ':'-separated piece of an environment value.
func (t translator) value(v string) string {
	parts := strings.Split(v, ":")
	for i, p := range parts {
		parts[i] = t.path(p)
	}
	return strings.Join(parts, ":")
}

// processLaunch returns argv, environment and working directory for the
// process-cooperative backend: virtual paths are translated in each argument,
// the working directory and each ':'-piece of every environment value.
func processLaunch(s Spec, lay layout) (argv, env []string, dir string) {
	t := newTranslator(s, lay)
	for _, a := range s.Command {
		argv = append(argv, t.path(a))
	}
	vars := sandboxEnv(s)
	for k, v := range vars {
		vars[k] = t.value(v)
	}
	return argv, envList(vars), t.path(VirtualWork)
}
