package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// resolveUnder resolves rel inside root, refusing any symlink on the way
// and anything but a regular file at the end.
func resolveUnder(root, what, rel string) (string, string, error) {
	c, err := cleanRel(what, rel)
	if err != nil {
		return "", "", err
	}
	cur := root
	parts := strings.Split(c, string(filepath.Separator))
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("%s %s does not exist under research/: %w", what, c, ErrLab)
		}
		if err != nil {
			return "", "", fmt.Errorf("%s %s: %w", what, c, err)
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return "", "", fmt.Errorf("%s %s goes through a symlink (%s): %w", what, c, filepath.Join(parts[:i+1]...), ErrLab)
		}
		if i == len(parts)-1 && !st.Mode().IsRegular() {
			return "", "", fmt.Errorf("%s %s is not a regular file: %w", what, c, ErrLab)
		}
	}
	return cur, c, nil
}

// sealFile copies path into the content-addressed folder and returns its
// sha256 and whether it is executable. The hash is taken of the copy, so a
// later change of the original cannot slip in.
func sealFile(sealedDir, path string) (string, bool, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", false, fmt.Errorf("seal %s: %w", path, err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return "", false, fmt.Errorf("seal %s: %w", path, err)
	}
	if err := os.MkdirAll(sealedDir, 0o755); err != nil {
		return "", false, fmt.Errorf("seal %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(sealedDir, ".seal-*")
	if err != nil {
		return "", false, fmt.Errorf("seal %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("seal %s: %w", path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	dst := filepath.Join(sealedDir, sum)
	if _, err := os.Stat(dst); err != nil {
		if err := os.Chmod(tmp.Name(), 0o444); err != nil {
			return "", false, fmt.Errorf("seal %s: %w", path, err)
		}
		if err := os.Rename(tmp.Name(), dst); err != nil {
			return "", false, fmt.Errorf("seal %s: %w", path, err)
		}
	}
	return sum, st.Mode()&0o111 != 0, nil
}

// hashFile is the sha256 of a file's bytes.
func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
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
