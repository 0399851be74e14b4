package sandbox

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

// sealedCopy is a sealed file as copied into the work folder.
type sealedCopy struct {
	rel, path, sha string
	perm           fs.FileMode
	file           harnessFile // the copy's inode, as the workspace measure leaves it out
}

// sealAll copies every sealed file into work, checks each copy against the
// recorded hash and removes its write bits.
func sealAll(s Spec, work string) ([]sealedCopy, error) {
	out := make([]sealedCopy, 0, len(s.Sealed))
	for _, f := range s.Sealed {
		c, err := sealOne(f, work)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// sealOne copies one sealed file from a handle opened without following a
// symlink and checked with fstat: the type, mode and bytes all come from the
// file that was checked, never from its name again.
func sealOne(f SealedFile, work string) (sealedCopy, error) {
	in, info, err := openRegular(f.HostPath)
	if errors.Is(err, errNotRegular) {
		return sealedCopy{}, fmt.Errorf("%w: seal %s: not a regular file", ErrInvalidSpec, f.Rel)
	}
	if err != nil {
		return sealedCopy{}, fmt.Errorf("seal %s: %w", f.Rel, err)
	}
	defer in.Close()
	perm := fs.FileMode(0o444)
	if info.Mode()&0o111 != 0 {
		perm = 0o555
	}
	dst := filepath.Join(work, filepath.FromSlash(f.Rel))
	sum, _, err := copyFileAndHash(in, info, dst, perm)
	if err != nil {
		return sealedCopy{}, err
	}
	if !strings.EqualFold(sum, f.SHA256) {
		return sealedCopy{}, fmt.Errorf("%w: %s: recorded %s, found %s", ErrSealChanged, f.Rel, f.SHA256, sum)
	}
	hf, err := harnessFileOf(dst)
	if err != nil {
		return sealedCopy{}, fmt.Errorf("seal %s: %w", f.Rel, err)
	}
	return sealedCopy{rel: f.Rel, path: dst, sha: sum, perm: perm, file: hf}, nil
}

var errNotRegular = errors.New("not a regular file")

// openRegular opens path for reading without following a final symlink (a
// symlink gives ELOOP) and without blocking on a FIFO, and checks with fstat
// that it is a regular file.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	in, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := in.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		_ = in.Close()
		return nil, nil, err
	}
	return in, info, nil
}

// harnessFiles are the inodes of the sealed copies.
func harnessFiles(sealed []sealedCopy) []harnessFile {
	out := make([]harnessFile, len(sealed))
	for i, c := range sealed {
		out[i] = c.file
	}
	return out
}

// mutations lists the sealed copies whose content, type or mode changed.
func mutations(sealed []sealedCopy) []string {
	var out []string
	for _, c := range sealed {
		if changed(c) {
			out = append(out, c.rel)
		}
	}
	slices.Sort(out)
	return out
}

func changed(c sealedCopy) bool {
	info, err := os.Lstat(c.path)
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != c.perm {
		return true
	}
	sum, _, err := HashFile(c.path)
	return err != nil || sum != c.sha
}
