package sandbox

import (
	"os"
	"slices"
	"sync"
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
func systemView() []viewEntry { return append(baseView(), etcEntries()...) }

// baseView is systemView without /etc.
func baseView() []viewEntry { return slices.Clone(hostBaseView()) }

// hostBaseView is the host's /usr and top-level links, read once: the
// layout of / does not change under a running host.
var hostBaseView = sync.OnceValue(func() []viewEntry {
	view := []viewEntry{{src: "/usr", dst: "/usr", dir: true}}
	for _, name := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		if e, ok := mirror("/" + name); ok {
			view = append(view, e)
		}
	}
	return view
})

// etcEntries is the host's etcItems, each on its own.
func etcEntries() []viewEntry {
	var view []viewEntry
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
