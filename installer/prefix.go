package installer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// forbiddenRoot is root's home: nothing is ever installed or changed there.
const forbiddenRoot = "/root"

// validatePrefix checks the shape of a prefix: absolute, not "/", no control
// characters, and neither it nor what its existing part resolves to is
// under /root. It returns the cleaned path. It writes nothing.
func validatePrefix(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("--prefix is empty: %w", ErrInvalid)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("--prefix %q must be an absolute path: %w", p, ErrInvalid)
	}
	if strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return "", fmt.Errorf("--prefix %q contains control characters: %w", p, ErrInvalid)
	}
	clean := filepath.Clean(p)
	if clean == "/" {
		return "", fmt.Errorf("--prefix / is not an installation folder: %w", ErrInvalid)
	}
	if underRoot(clean) {
		return "", fmt.Errorf("--prefix %s is under /root, which is refused (the installer never changes /root): %w", clean, ErrInvalid)
	}
	if resolved := resolveExisting(clean); underRoot(resolved) {
		return "", fmt.Errorf("--prefix %s resolves to %s, under /root, which is refused: %w", clean, resolved, ErrInvalid)
	}
	return clean, nil
}

func underRoot(p string) bool {
	return p == forbiddenRoot || strings.HasPrefix(p, forbiddenRoot+"/")
}

// resolveExisting resolves symbolic links in the longest ancestor of p that
// can be resolved (it exists and we may look into it) and appends the rest.
func resolveExisting(p string) string {
	rest := []string{}
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// ids is who must be able to reach the prefix. UID -1 stands for an account
// that does not exist yet: only the "other" permission bits count for it.
type ids struct {
	UID  int
	GIDs []int
}

// dirInfo is what reachability needs to know about one folder.
type dirInfo struct {
	Mode     fs.FileMode
	UID, GID int
}

// statFunc returns the dirInfo of an existing path (following links).
type statFunc func(path string) (dirInfo, error)

func osStat(path string) (dirInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return dirInfo{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirInfo{}, fmt.Errorf("stat %s: no owner information", path)
	}
	return dirInfo{Mode: fi.Mode(), UID: int(st.Uid), GID: int(st.Gid)}, nil
}

// checkReachable checks that who can search every existing ancestor of the
// (resolved) path p; folders the installer creates later are 0755.
func checkReachable(p string, who ids, stat statFunc) error {
	for _, dir := range ancestors(p) {
		info, err := stat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("check %s: %w", dir, err)
		}
		if !info.Mode.IsDir() {
			return fmt.Errorf("%s is not a folder: %w", dir, ErrInvalid)
		}
		if !canSearch(info, who) {
			return fmt.Errorf("the account cannot reach %s: %s is not searchable by it (mode %04o, owner %d:%d); every parent folder must be searchable: %w",
				p, dir, info.Mode.Perm(), info.UID, info.GID, ErrInvalid)
		}
	}
	return nil
}

// ancestors lists "/", then each longer ancestor of p, excluding p itself.
func ancestors(p string) []string {
	var out []string
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		out = append(out, d)
		if d == "/" || d == "." {
			break
		}
	}
	slices.Reverse(out)
	return out
}

func canSearch(info dirInfo, who ids) bool {
	perm := info.Mode.Perm()
	switch {
	case who.UID == 0:
		return true
	case who.UID >= 0 && info.UID == who.UID:
		return perm&0o100 != 0
	case slices.Contains(who.GIDs, info.GID):
		return perm&0o010 != 0
	}
	return perm&0o001 != 0
}
