package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/simjecture/simjecture/sandbox"
)

// Sources and inputs are opened, checked and sealed from one handle: each
// component of the path is opened relative to the folder before it with
// O_NOFOLLOW, so a symlink anywhere on the way (research/ included) is
// refused, and a name swapped for a symlink after the check cannot be
// followed. os.Root is not enough: it follows symlinks that stay inside the
// root, and the contract refuses any symlinked input.

// openUnder opens rel inside root without following any symlink and
// returns the open regular file and the cleaned path.
func openUnder(root, what, rel string) (*os.File, string, error) {
	c, err := cleanRel(what, rel)
	if err != nil {
		return nil, "", err
	}
	dir, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: open research/: %w", what, c, err)
	}
	parts := strings.Split(c, string(filepath.Separator))
	for i, part := range parts {
		flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(parts)-1 {
			flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
		}
		fd, err := unix.Openat(dir, part, flags, 0)
		if err != nil {
			err = openError(dir, part, what, c, filepath.Join(parts[:i+1]...), err)
		}
		_ = unix.Close(dir)
		if err != nil {
			return nil, "", err
		}
		dir = fd
	}
	f := os.NewFile(uintptr(dir), filepath.Join(root, c))
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		_ = f.Close()
		return nil, "", fmt.Errorf("%s %s is not a regular file: %w", what, c, ErrLab)
	}
	return f, c, nil
}

// openError turns a failed openat of part (the path at) in dir into a
// one-line lab error; O_DIRECTORY|O_NOFOLLOW on a symlink gives ENOTDIR, so
// the kind is looked up again without following.
func openError(dir int, part, what, c, at string, err error) error {
	var st unix.Stat_t
	isLink := unix.Fstatat(dir, part, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
	switch {
	case isLink || errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%s %s goes through a symlink (%s): %w", what, c, at, ErrLab)
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR) && at != c:
		return fmt.Errorf("%s %s does not exist under research/: %w", what, c, ErrLab)
	case errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("%s %s goes through something that is not a folder (%s): %w", what, c, at, ErrLab)
	}
	return fmt.Errorf("%s %s: %w", what, c, err)
}

// resolveUnder checks that rel names a regular file inside root reached
// through no symlink, and returns its path and the cleaned path.
func resolveUnder(root, what, rel string) (string, string, error) {
	f, c, err := openUnder(root, what, rel)
	if err != nil {
		return "", "", err
	}
	_ = f.Close()
	return filepath.Join(root, c), c, nil
}

// ExperimentWorkspaceBytes is the workspace limit of every experiment: its
// work folder (sealed source and inputs, outputs, scratch) may hold at most
// this much (docs/security.md, Limits).
const ExperimentWorkspaceBytes = sandbox.DefaultWorkspaceBytes

// checkInputSizes refuses a run whose source and inputs, by their apparent
// sizes (a sparse file's holes count: the experiment sees them as bytes),
// add up to more than limit: they are copied into the experiment's
// workspace. The error names the largest of them and the sizes.
func checkInputSizes(open []openInput, limit int64) error {
	var total int64
	var big openInput
	for _, o := range open {
		total += o.size
		if o.size > big.size {
			big = o
		}
	}
	if total <= limit {
		return nil
	}
	return fmt.Errorf("inputs: the source and inputs are copied into the experiment's workspace, which holds at most %s; together they are %s, the largest %s %s %s: %w",
		sizeText(limit), sizeText(total), big.what, big.rel, sizeText(big.size), ErrLab)
}

// sizeText is n bytes in MiB (GiB from 1 GiB on) and exactly.
func sizeText(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB (%d bytes)", float64(n)/(1<<30), n)
	}
	return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
}

// sealFile copies the open file src into the content-addressed folder and
// returns its sha256. Copy and hash come from the handle that was checked,
// never from the name, the hash is taken of the copy, so a later change of
// the original cannot slip in, and the copy stops at the size that was
// checked (a file that grew meanwhile is refused) and keeps a sparse
// file's holes (sandbox.SealCopy).
func sealFile(sealedDir string, src *os.File) (string, error) {
	st, err := src.Stat()
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", src.Name(), err)
	}
	if err := os.MkdirAll(sealedDir, 0o755); err != nil {
		return "", fmt.Errorf("seal %s: %w", src.Name(), err)
	}
	tmp, err := os.CreateTemp(sealedDir, ".seal-*")
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", src.Name(), err)
	}
	defer os.Remove(tmp.Name())
	sum, _, err := sandbox.SealCopy(src, st, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, sandbox.ErrSealGrew) || errors.Is(err, sandbox.ErrSealShrank) {
		return "", fmt.Errorf("%w: %w", err, ErrLab)
	}
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", src.Name(), err)
	}
	dst := filepath.Join(sealedDir, sum)
	if st, err := os.Lstat(dst); err != nil || !st.Mode().IsRegular() { // a planted symlink is replaced
		if err := os.Chmod(tmp.Name(), 0o444); err != nil {
			return "", fmt.Errorf("seal %s: %w", src.Name(), err)
		}
		if err := os.Rename(tmp.Name(), dst); err != nil {
			return "", fmt.Errorf("seal %s: %w", src.Name(), err)
		}
	}
	return sum, nil
}
