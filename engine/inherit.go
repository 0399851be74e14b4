package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simjecture/simjecture/provider"
)

// Limits of the files a continuation inherits (contract section 14).
const (
	MaxInheritFiles     = 128
	MaxInheritFileBytes = 1 << 20
	MaxSnapshotBytes    = 16 << 20
)

// connectionNames are the file names a continuation never inherits, in any
// letter case: connection files of agent backends and credentials. A file
// of any other name is refused too when it is an api connection file (a
// JSON object with an "api_key" field).
var connectionNames = []string{"provider.json", "api-connection.json", "connection.json", "credentials.json",
	"auth.json", "config.toml"}

// inheritedFile is one file chosen from the parent's research/, read.
type inheritedFile struct {
	rel  string // slash-separated, relative to research/
	text []byte
	sha  string
}

// readInherited checks and reads the files chosen from the parent's
// research folder (root): at most MaxInheritFiles distinct paths, each a
// regular file of at most MaxInheritFileBytes reached through no symlink,
// none hidden, none a connection file. The first refusal names its path.
func readInherited(root string, rels []string) ([]inheritedFile, error) {
	if err := checkResearchRoot(root); err != nil {
		return nil, err
	}
	var out []inheritedFile
	seen := map[string]bool{}
	for _, r := range rels {
		rel, err := inheritRel(r)
		if err != nil {
			return nil, err
		}
		if seen[rel] {
			continue
		}
		seen[rel] = true
		if len(seen) > MaxInheritFiles {
			return nil, badField(FieldInheritFile, "more than %d files", MaxInheritFiles)
		}
		f, err := readInheritFile(root, rel)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// checkResearchRoot refuses a parent whose research/ is missing or a symlink.
func checkResearchRoot(root string) error {
	st, err := os.Lstat(root)
	if err != nil {
		return badField(FieldContinueFrom, "%s: %v", root, unwrapPath(err))
	}
	if !st.IsDir() {
		return badField(FieldContinueFrom, "%s is not a folder (a symlink is refused)", root)
	}
	return nil
}

// inheritRel checks the shape of a chosen path and returns it cleaned and
// slash-separated: relative, inside research/, no hidden part, no
// connection file name.
func inheritRel(p string) (string, error) {
	switch {
	case strings.TrimSpace(p) == "":
		return "", badField(FieldInheritFile, "an empty path; give a path relative to the parent's research/")
	case strings.ContainsAny(p, "\x00\n\r\\"):
		return "", badField(FieldInheritFile, "%q: a path with a NUL, a line break or a backslash", p)
	case filepath.IsAbs(p):
		return "", badField(FieldInheritFile, "%s is absolute; give a path relative to the parent's research/", p)
	}
	parts := strings.Split(filepath.ToSlash(p), "/")
	for _, part := range parts {
		switch {
		case part == "" || part == ".":
			continue
		case part == "..":
			return "", badField(FieldInheritFile, "%s leaves the parent's research/ (..)", p)
		case strings.HasPrefix(part, "."):
			return "", badField(FieldInheritFile, "%s is hidden (a part starts with a dot); hidden files are never inherited", p)
		}
	}
	rel := filepath.ToSlash(filepath.Clean(p))
	if slices.Contains(connectionNames, strings.ToLower(filepath.Base(rel))) {
		return "", badField(FieldInheritFile, "%s is named like a connection file; connection files are never inherited", p)
	}
	return rel, nil
}

// readInheritFile reads one chosen file, refusing a symlink anywhere on
// its path, anything but a regular file, and more than MaxInheritFileBytes
// (checked again on the bytes read, for a file that grows meanwhile).
func readInheritFile(root, rel string) (inheritedFile, error) {
	if err := noSymlinks(root, rel); err != nil {
		return inheritedFile{}, err
	}
	path := filepath.Join(root, filepath.FromSlash(rel))
	f, err := provider.OpenNoFollow(path) // swapped for a link or a FIFO since the check: refused
	if err != nil {
		return inheritedFile{}, badField(FieldInheritFile, "%s: %v", rel, unwrapPath(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxInheritFileBytes+1))
	if err != nil {
		return inheritedFile{}, badField(FieldInheritFile, "%s: %v", rel, unwrapPath(err))
	}
	if len(b) > MaxInheritFileBytes {
		return inheritedFile{}, badField(FieldInheritFile, "%s is larger than %d bytes (1 MiB)", rel, MaxInheritFileBytes)
	}
	if isConnectionFile(b) {
		return inheritedFile{}, badField(FieldInheritFile, "%s is an api connection file (it has an api_key); connection files are never inherited", rel)
	}
	sum := sha256.Sum256(b)
	return inheritedFile{rel: rel, text: b, sha: hex.EncodeToString(sum[:])}, nil
}

// noSymlinks refuses rel when any part of it under root is a symlink or
// the file itself is not a regular file.
func noSymlinks(root, rel string) error {
	parts := strings.Split(rel, "/")
	cur := root
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if err != nil {
			return badField(FieldInheritFile, "%s: %v", rel, unwrapPath(err))
		}
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			return badField(FieldInheritFile, "%s: %s is a symlink; symlinks are never inherited", rel, strings.Join(parts[:i+1], "/"))
		case i == len(parts)-1 && !st.Mode().IsRegular():
			return badField(FieldInheritFile, "%s is not a regular file", rel)
		}
	}
	return nil
}

// isConnectionFile reports whether b parses as a JSON object with an
// "api_key" field, as an api backend connection file does.
func isConnectionFile(b []byte) bool {
	if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	_, ok := m["api_key"]
	return ok
}

// inheritedBytes is the size of the chosen files together.
func inheritedBytes(files []inheritedFile) int {
	n := 0
	for _, f := range files {
		n += len(f.text)
	}
	return n
}
