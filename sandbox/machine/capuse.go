package machine

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Versions of a shipped capability. Each version's runtime is its own
// folder, ROOT/capabilities/NAME/runtime-HASH, never changed once in
// place; a job holds the one it started with until it ends, so shipping a
// newer version meanwhile neither removes nor swaps the runtime under it.
// A version neither installed nor held is removed.

// capRuntime is the runtime folder of version hash of capability name.
func (d *daemon) capRuntime(name, hash string) string {
	return filepath.Join(d.capsDir(), name, "runtime-"+hash)
}

// hold counts one more job using the runtime folder dir of capability
// name; the release it returns (safe to call more than once) uncounts it
// and removes the folder if it is no longer the installed version and no
// other job uses it. d.capMu held.
func (d *daemon) hold(name, dir string) func() {
	if d.capUse == nil {
		d.capUse = map[string]int{}
	}
	d.capUse[dir]++
	var once sync.Once
	return func() {
		once.Do(func() {
			d.capMu.Lock()
			defer d.capMu.Unlock()
			if d.capUse[dir]--; d.capUse[dir] <= 0 {
				delete(d.capUse, dir)
				d.pruneCapability(name)
			}
		})
	}
}

// placeRuntime puts the checked runtime folder tmp of a in place. A folder
// of that version a running job holds is kept when it still hashes as a
// (its files given their shipped modes); one changed on the worker is
// refused while held. d.capMu held.
func (d *daemon) placeRuntime(a capabilityArgs, tmp string) error {
	dst := d.capRuntime(a.Name, a.Hash)
	if d.capUse[dst] > 0 {
		if got, err := runtimeHash(a.Manifest, dst); err == nil && got == a.Hash {
			return setModes(dst, a.Files)
		}
		return fmt.Errorf("capability %s: the worker's folder of version %s changed on the worker and a running job uses it: ship again when that job has ended", a.Name, a.Hash)
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("capability %s: remove the changed %s: %w", a.Name, dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("capability %s: install %s: %w", a.Name, dst, err)
	}
	return nil
}

// pruneCapability removes what ROOT/capabilities/NAME holds besides its
// record, the installed version's runtime and the runtimes jobs hold (the
// versions it replaced, a runtime folder of an older layout, an install cut
// short). d.capMu held.
func (d *daemon) pruneCapability(name string) {
	home := filepath.Join(d.capsDir(), name)
	var rec capRecord
	keep := map[string]bool{filepath.Join(home, "capability.json"): true}
	if readJSON(filepath.Join(home, "capability.json"), &rec) == nil && shaPattern.MatchString(rec.Hash) {
		keep[d.capRuntime(name, rec.Hash)] = true
	}
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		p := filepath.Join(home, e.Name())
		if keep[p] || d.capUse[p] > 0 {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			d.log.Warn("remove a capability version no job uses", "capability", name, "path", p, "err", err)
		}
	}
}

// pruneCapabilities prunes every shipped capability (a starting daemon:
// no job runs yet).
func (d *daemon) pruneCapabilities() {
	d.capMu.Lock()
	defer d.capMu.Unlock()
	entries, _ := os.ReadDir(d.capsDir())
	for _, e := range entries {
		if e.IsDir() && capNamePattern.MatchString(e.Name()) {
			d.pruneCapability(e.Name())
		}
	}
}
