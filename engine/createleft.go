package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simjecture/simjecture/store"
)

// What a creation killed before it finished leaves (docs/campaign.md,
// "Creating a study"). A study exists only once its store, holding its
// study row, is renamed to DIR/simjecture.db; before that the folder may
// hold the lock file, the operator's files, empty folders and the
// temporary store, and nothing else. A later `study` removes exactly those
// leftovers and creates the study; the readers say the creation was
// interrupted.

// ErrCreationInterrupted marks a folder that holds only the leftovers of an
// interrupted creation: no study, and `study` may create one in it.
var ErrCreationInterrupted = errors.New("the creation of its study was interrupted; run simjecture study with the hypothesis and instructions again")

// tempStoreName is the store a creation writes before renaming it to
// storeName.
const tempStoreName = ".simjecture-creating.db"

// sqliteSuffixes are the files SQLite keeps beside a store.
var sqliteSuffixes = []string{"", "-wal", "-shm", "-journal"}

// leftoverDirs are the folders a creation makes.
var leftoverDirs = []string{"operator", "research", "experiments", "supervisor"}

// creationMarker is written, under the lock, before anything else of a
// creation: the sha256 of every file the creation is about to write, by
// its path relative to DIR. Only files listed there, with that content,
// are ever removed as leftovers; it goes once the store is in place.
const creationMarker = ".simjecture-creating"

// writeCreationMarker lists files (path relative to c.Dir → content) in
// c's creation marker, and the names in anyContent (temporary files of
// this creation, whose content a kill may have cut short) with any content.
func writeCreationMarker(c Campaign, files map[string][]byte, anyContent ...string) error {
	sums := map[string]string{}
	for rel, b := range files {
		sum := sha256.Sum256(b)
		sums[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
	}
	for _, rel := range anyContent {
		sums[filepath.ToSlash(rel)] = ""
	}
	body, err := json.Marshal(sums)
	if err != nil {
		return fmt.Errorf("creation marker: %w", err)
	}
	p := filepath.Join(c.Dir, creationMarker)
	if err := os.WriteFile(p+".new", body, 0o644); err != nil {
		return fmt.Errorf("creation marker: %w", err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		return fmt.Errorf("creation marker: %w", err)
	}
	return nil
}

// readCreationMarker reads c's creation marker; ok is false when there is
// none (or it does not parse: then nothing counts as this creation's).
func readCreationMarker(c Campaign) (map[string]string, bool) {
	body, err := os.ReadFile(filepath.Join(c.Dir, creationMarker))
	if err != nil {
		return nil, false
	}
	var sums map[string]string
	if json.Unmarshal(body, &sums) != nil {
		return nil, false
	}
	return sums, true
}

// interrupted wraps ErrCreationInterrupted (and ErrInvalid) for c.
func (c Campaign) interrupted() error {
	return fmt.Errorf("%s: %w: %w", c.Dir, ErrCreationInterrupted, ErrInvalid)
}

// leftovers reports whether c holds only what an interrupted creation
// leaves (an empty folder included) and returns the files to remove: the
// marker, the temporary store, a blank store and the files the marker
// lists with the content it lists. A folder with anything else — a file
// the marker does not list or whose content changed, a symlink, a store
// that recorded something — is not an interrupted creation. A creation
// killed before this marker existed (older versions) left a store with
// no study row: it counts when it is blank and the folders hold nothing
// but the operator's two files.
func (c Campaign) leftovers(ctx context.Context) ([]string, bool, error) {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return nil, false, fmt.Errorf("campaign %s: %w", c.Dir, err)
	}
	sums, marked := readCreationMarker(c)
	if !marked {
		sums = map[string]string{"operator/hypothesis.txt": "", "operator/instructions.txt": ""}
	}
	var found []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == filepath.Base(c.LockFile()) && e.Type().IsRegular():
		case slices.Contains(leftoverDirs, name) && e.IsDir():
			files, ok := listedFiles(c.Dir, name, sums)
			if !ok {
				return nil, false, nil
			}
			if marked {
				found = append(found, files...)
			}
		case e.Type().IsRegular() && (name == creationMarker || name == creationMarker+".new" || isStoreFile(name) ||
			marked && listedFile(c.Dir, name, sums)):
			found = append(found, filepath.Join(c.Dir, name))
		default:
			return nil, false, nil
		}
	}
	if !marked && hasEntries(c.Dir) && !c.Exists() && !onlyLock(entries, c) {
		return nil, false, nil // no marker and no old store: not ours
	}
	if !c.Exists() {
		return found, true, nil
	}
	blank, err := store.IsBlank(ctx, c.DB())
	return found, blank, err
}

// onlyLock reports whether entries are c's lock file at most, and the
// first creation marker being written (killed before its rename).
func onlyLock(entries []fs.DirEntry, c Campaign) bool {
	for _, e := range entries {
		if n := e.Name(); n != filepath.Base(c.LockFile()) && n != creationMarker+".new" {
			return false
		}
	}
	return true
}

// isStoreFile reports whether name is the store or the temporary store, or
// one of SQLite's files beside them.
func isStoreFile(name string) bool {
	for _, base := range []string{tempStoreName, storeName} {
		for _, s := range sqliteSuffixes {
			if name == base+s {
				return true
			}
		}
	}
	return false
}

// listedFiles walks DIR/top and reports whether it holds only folders on
// the way to listed files and regular files listed in sums with their
// content (an empty sum accepts any content); it returns those files.
func listedFiles(dir, top string, sums map[string]string) ([]string, bool) {
	var files []string
	err := filepath.WalkDir(filepath.Join(dir, top), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && (rel == top || leadsToListed(rel, sums)):
			return nil
		case d.Type().IsRegular():
			if !listedFile(dir, rel, sums) {
				return fs.ErrInvalid
			}
			files = append(files, p)
			return nil
		}
		return fs.ErrInvalid
	})
	return files, err == nil
}

// partialSuffix names a file a creation is writing: it writes every file
// under that name first and renames it into place (writeCreating), so a
// kill leaves either the whole file or a partial one under this name.
const partialSuffix = ".simjecture-partial"

// writeCreating writes a file of a creation: under its partial name first,
// then renamed into place.
func writeCreating(path string, b []byte, mode os.FileMode) error {
	if err := os.WriteFile(path+partialSuffix, b, mode); err != nil {
		return err
	}
	return os.Rename(path+partialSuffix, path)
}

// listedFile reports whether the regular file rel under dir is listed in
// sums with its content (an empty sum accepts any content), or is the
// partial file of one listed.
func listedFile(dir, rel string, sums map[string]string) bool {
	if name, partial := strings.CutSuffix(filepath.ToSlash(rel), partialSuffix); partial {
		_, ok := sums[name]
		return ok
	}
	want, ok := sums[filepath.ToSlash(rel)]
	return ok && (want == "" || fileSHA256(filepath.Join(dir, rel)) == want)
}

// leadsToListed reports whether folder rel is an ancestor of a listed file.
func leadsToListed(rel string, sums map[string]string) bool {
	for p := range sums {
		if strings.HasPrefix(p, rel+"/") {
			return true
		}
	}
	return false
}

func fileSHA256(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// clearLeftovers removes the leftovers of an interrupted creation, found
// under the lock (and then the folders they leave empty); it refuses a
// folder that holds anything else.
func (c Campaign) clearLeftovers(ctx context.Context) error {
	found, ok, err := c.leftovers(ctx)
	if err != nil {
		return err
	}
	switch {
	case !ok && c.Exists():
		return fmt.Errorf("%s already holds a study: %w", c.Dir, ErrInvalid)
	case !ok:
		return fmt.Errorf("campaign %s is a non-empty folder that holds no study: %w", c.Dir, ErrInvalid)
	}
	for _, p := range found {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove what an interrupted creation left: %w", err)
		}
	}
	removeEmptyDirs(c.Dir, leftoverDirs)
	return nil
}

// removeEmptyDirs removes, deepest first, the folders under dir/tops that
// are empty (os.Remove removes no folder that holds anything).
func removeEmptyDirs(dir string, tops []string) {
	for _, top := range tops {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(dir, top), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = os.Remove(dirs[i])
		}
	}
}

// NoStudy is the error of a reader given a campaign folder without a
// store: ErrCreationInterrupted when it holds only the leftovers of a
// creation (and no live process is creating a study in it), a FieldError
// of the campaign folder when the path is a file, else a folder that holds
// no study.
func (c Campaign) NoStudy(ctx context.Context) error {
	if err := checkNotFile(c.Dir); err != nil {
		return err
	}
	if _, ok, err := c.leftovers(ctx); err == nil && ok && hasEntries(c.Dir) && !Owned(c) {
		return c.interrupted()
	}
	return fmt.Errorf("%s holds no simjecture study: %w", c.Dir, ErrInvalid)
}

func hasEntries(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}
