package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/simjecture/simjecture/provider"
)

// cleanRel checks that p is a relative path that stays inside its root:
// not empty, not absolute, no "..", no NUL. It returns the cleaned path.
func cleanRel(what, p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("%s path is empty: %w", what, ErrLab)
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("%s path contains a NUL byte: %w", what, ErrLab)
	case strings.ContainsAny(p, "\n\r"):
		return "", fmt.Errorf("%s path %q contains a line break: %w", what, p, ErrLab)
	case filepath.IsAbs(p):
		return "", fmt.Errorf("%s path %s is absolute; give a path relative to research/: %w", what, p, ErrLab)
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return "", fmt.Errorf("%s path %s leaves its folder (..): %w", what, p, ErrLab)
		}
	}
	c := filepath.Clean(p)
	if c == "." {
		return "", fmt.Errorf("%s path %q names no file: %w", what, p, ErrLab)
	}
	return c, nil
}

// hashFile is the sha256 of a regular file's bytes, never through a
// symlink (a review's packet is in a folder its reviewer could write).
func hashFile(path string) (string, int64, error) {
	f, err := provider.OpenNoFollow(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func shortHash(prefix string, v any) string {
	b := canonicalJSON(v)
	sum := sha256.Sum256(b)
	return prefix + hex.EncodeToString(sum[:])[:24]
}
