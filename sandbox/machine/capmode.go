package machine

import (
	"fmt"
	"os"
	"path/filepath"
)

// Modes of shipped runtime files. A file's mode is not part of the
// capability hash (sandbox.DirectoryHash hashes paths and contents, and the
// frozen hashes of existing studies must stay valid), so the coordinator
// ships each file's mode and the daemon compares the executable bits too:
// a helper made executable after a first ship is not "present" but
// corrected on the worker.

// shippedMode is the mode the worker gives a runtime file shipped with m:
// readable by its owner, never writable by others.
func shippedMode(m os.FileMode) os.FileMode { return m.Perm()&0o755 | 0o400 }

// modesDiffering counts the files of a whose executable bits in the
// runtime folder dir are not those shipped (a file that cannot be read
// counts as differing).
func modesDiffering(dir string, files []capFile) int {
	n := 0
	for _, f := range files {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Rel)))
		if err != nil || st.Mode().Perm()&0o111 != shippedMode(f.Mode)&0o111 {
			n++
		}
	}
	return n
}

// setModes gives each file of files in the runtime folder dir its shipped
// mode (its content, and so the hash, unchanged).
func setModes(dir string, files []capFile) error {
	for _, f := range files {
		if err := os.Chmod(filepath.Join(dir, filepath.FromSlash(f.Rel)), shippedMode(f.Mode)); err != nil {
			return fmt.Errorf("mode of %s: %w", f.Rel, err)
		}
	}
	return nil
}
