package installer

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Names inside the prefix.
const (
	appDir      = "app"
	binDir      = "bin"
	currentLink = "current"
	binaryStem  = "simjecture-"
	stagingStem = ".staging-"
)

// owner is who owns a file: -1 leaves that id as it is (user mode).
type owner struct{ UID, GID int }

// noChange keeps the ids of the caller (user mode).
var noChange = owner{-1, -1}

// layout is the ownership and modes of the files an installation holds.
type layout struct {
	Prefix, App, Bin, Binary, Launcher owner
	DirMode, BinaryMode                fs.FileMode
}

// userLayout keeps everything the caller's, readable by others.
func userLayout() layout {
	return layout{noChange, noChange, noChange, noChange, noChange, 0o755, 0o755}
}

// accountLayout: the account may read and run what is installed, owns the
// binary, and can change nothing root executes.
func accountLayout(a account) layout {
	rootAcct := owner{0, a.GID}
	return layout{
		Prefix: rootAcct, App: rootAcct, Bin: owner{0, 0},
		Binary: owner{a.UID, a.GID}, Launcher: owner{0, 0},
		DirMode: 0o750, BinaryMode: 0o750,
	}
}

// mkdirOwned creates dir (if missing) and sets its owner and mode.
func mkdirOwned(dir string, o owner, mode fs.FileMode) error {
	if err := os.Mkdir(dir, mode); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder: %w", dir, ErrStep)
	}
	if err := os.Chown(dir, o.UID, o.GID); err != nil {
		return fmt.Errorf("chown %s: %w", dir, err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", dir, err)
	}
	return nil
}

// writeAtomic writes data to a temporary file beside path and renames it
// over path, so readers see the old file or the new one, never a mix.
func writeAtomic(path string, data []byte, o owner, mode fs.FileMode) error {
	tmp, err := tempName(path)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	err = finishFile(f, func(w io.Writer) error { _, err := w.Write(data); return err }, o, mode)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// finishFile fills f, syncs it, sets owner and mode, and closes it.
func finishFile(f *os.File, fill func(io.Writer) error, o owner, mode fs.FileMode) error {
	err := fill(f)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chown(o.UID, o.GID)
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func tempName(path string) (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random name: %w", err)
	}
	return filepath.Join(filepath.Dir(path), stagingStem+hex.EncodeToString(b)), nil
}

// stageBinary copies src into a staging file in app and returns its path
// and the final name it will take (simjecture-<first 12 hex of sha256>).
func stageBinary(src, app string, o owner, mode fs.FileMode) (staged, name string, err error) {
	in, err := os.Open(src)
	if err != nil {
		return "", "", fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	staged, err = tempName(filepath.Join(app, "x"))
	if err != nil {
		return "", "", err
	}
	out, err := os.OpenFile(staged, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("create %s: %w", staged, err)
	}
	h := sha256.New()
	err = finishFile(out, func(w io.Writer) error {
		_, err := io.Copy(io.MultiWriter(w, h), in)
		return err
	}, o, mode)
	if err != nil {
		_ = os.Remove(staged)
		return "", "", fmt.Errorf("stage %s: %w", src, err)
	}
	return staged, binaryStem + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// switchCurrent points app/current at name by renaming a fresh symlink
// over it: the switch is atomic, and the previous target stays on disk.
func switchCurrent(app, name string) (previous string, err error) {
	link := filepath.Join(app, currentLink)
	previous, _ = os.Readlink(link)
	tmp, err := tempName(link)
	if err != nil {
		return "", err
	}
	if err := os.Symlink(name, tmp); err != nil {
		return "", fmt.Errorf("link %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("switch %s: %w", link, err)
	}
	return previous, nil
}

// prune removes staging leftovers and every installed binary except keep.
func prune(app string, keep ...string) error {
	entries, err := os.ReadDir(app)
	if err != nil {
		return fmt.Errorf("list %s: %w", app, err)
	}
	var errs []error
	for _, e := range entries {
		n := e.Name()
		ours := strings.HasPrefix(n, stagingStem) || strings.HasPrefix(n, binaryStem)
		if !ours || slices.Contains(keep, n) {
			continue
		}
		if err := os.Remove(filepath.Join(app, n)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
