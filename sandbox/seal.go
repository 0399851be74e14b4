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
// recorded hash and removes its write bits. Every file is opened and
// checked first: sealed files that together are larger than the workspace
// limit (they are copied into it) are refused before anything is copied.
func sealAll(s Spec, work string, b *blanks) ([]sealedCopy, error) {
	open, err := openSealed(s)
	defer func() {
		for _, o := range open {
			_ = o.in.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	out := make([]sealedCopy, 0, len(open))
	for _, o := range open {
		c, err := sealOne(o, work, b)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// openedSeal is a sealed file opened and checked, not yet copied.
type openedSeal struct {
	f    SealedFile
	in   *os.File
	info fs.FileInfo
}

// openSealed opens every sealed file of s without following a symlink and
// refuses them when their sizes (apparent: a hole counts) add up to more
// than s.WorkspaceBytes, naming the file that went past it.
func openSealed(s Spec) ([]openedSeal, error) {
	out := make([]openedSeal, 0, len(s.Sealed))
	var total int64
	for _, f := range s.Sealed {
		in, info, err := openRegular(f.HostPath)
		if errors.Is(err, errNotRegular) {
			return out, fmt.Errorf("%w: seal %s: not a regular file", ErrInvalidSpec, f.Rel)
		}
		if err != nil {
			return out, fmt.Errorf("seal %s: %w", f.Rel, err)
		}
		out = append(out, openedSeal{f: f, in: in, info: info})
		total += info.Size()
		if total > s.WorkspaceBytes {
			return out, fmt.Errorf("%w: seal %s: it is %d bytes, and the sealed files up to it are %d bytes, more than the workspace limit of %d bytes they are copied into",
				ErrInvalidSpec, f.Rel, info.Size(), total, s.WorkspaceBytes)
		}
	}
	return out, nil
}

// sealOne copies one sealed file from its handle, opened without following
// a symlink and checked with fstat: the type, mode and bytes all come from
// the file that was checked, never from its name again, and the copy stops
// at the size that was checked.
func sealOne(o openedSeal, work string, b *blanks) (sealedCopy, error) {
	perm := fs.FileMode(0o444)
	if o.info.Mode()&0o111 != 0 {
		perm = 0o555
	}
	dst := filepath.Join(work, filepath.FromSlash(o.f.Rel))
	sum, _, err := copyFileAndHash(o.in, o.info, dst, perm, b)
	if err != nil {
		return sealedCopy{}, err
	}
	if !strings.EqualFold(sum, o.f.SHA256) {
		return sealedCopy{}, fmt.Errorf("%w: %s: recorded %s, found %s", ErrSealChanged, o.f.Rel, o.f.SHA256, sum)
	}
	hf, err := harnessFileOf(dst)
	if err != nil {
		return sealedCopy{}, fmt.Errorf("seal %s: %w", o.f.Rel, err)
	}
	return sealedCopy{rel: o.f.Rel, path: dst, sha: sum, perm: perm, file: hf}, nil
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

// changed reports whether the copy at c.path is no longer a regular file
// (a symlink counts) of mode c.perm and hash c.sha; it hashes the handle
// it checked.
func changed(c sealedCopy) bool {
	f, info, err := openRegular(c.path)
	if err != nil {
		return true
	}
	defer f.Close()
	if info.Mode().Perm() != c.perm {
		return true
	}
	sum, _, err := hashOpened(f, info)
	return err != nil || sum != c.sha
}
