package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/simjecture/simjecture/sandbox"
)

// Capabilities on a worker. `worker prepare --capabilities` puts each file
// of a capability's runtime as a content-addressed blob, then asks the
// daemon to install it: ROOT/capabilities/NAME/ holds capability.json (the
// name, the manifest hash and the manifest as hashed on the coordinator:
// the installed version) and runtime-HASH/ (the files of the version of
// that manifest hash, made from the blobs). The daemon re-hashes each one
// when a session says hello and reports only those that still hash as
// shipped; a job with a capability re-checks it before it runs and holds
// its runtime-HASH folder until it ends: a newer version shipped meanwhile
// goes in its own folder, and the old one is removed when no job uses it
// (capuse.go).

var capNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)

// capRecord is ROOT/capabilities/NAME/capability.json.
type capRecord struct {
	Name     string          `json:"name"`
	Hash     string          `json:"hash"`
	Manifest json.RawMessage `json:"manifest"`
}

// capsDir is ROOT/capabilities.
func (d *daemon) capsDir() string { return filepath.Join(filepath.Dir(d.root), "capabilities") }

// capabilities are the shipped capabilities whose runtime still hashes as
// shipped; each one that does not is logged and left out.
func (d *daemon) capabilities() map[string]string {
	d.capMu.Lock()
	defer d.capMu.Unlock()
	out := map[string]string{}
	entries, _ := os.ReadDir(d.capsDir())
	for _, e := range entries {
		if !e.IsDir() || !capNamePattern.MatchString(e.Name()) {
			continue
		}
		sum, err := d.verifyCapability(e.Name())
		if err != nil {
			d.log.Warn("capability not reported", "capability", e.Name(), "err", err)
			continue
		}
		out[e.Name()] = sum
	}
	return out
}

// verifyCapability re-hashes the shipped capability name; d.capMu held.
func (d *daemon) verifyCapability(name string) (string, error) {
	dir := filepath.Join(d.capsDir(), name)
	var rec capRecord
	if err := readJSON(filepath.Join(dir, "capability.json"), &rec); err != nil {
		return "", fmt.Errorf("capability %s: its record: %w", name, err)
	}
	if !shaPattern.MatchString(rec.Hash) {
		return "", fmt.Errorf("capability %s: its record names a malformed hash %q", name, rec.Hash)
	}
	runtime, err := directoryHash(d.capRuntime(name, rec.Hash))
	if err != nil {
		return "", fmt.Errorf("capability %s: %w", name, err)
	}
	got, err := sandbox.CapabilityHash(rec.Manifest, runtime)
	switch {
	case err != nil:
		return "", fmt.Errorf("capability %s: %w", name, err)
	case rec.Name != name || got != rec.Hash:
		return "", fmt.Errorf("capability %s: its runtime or manifest changed on the worker since it was shipped (it hashes to %s, shipped as %s)", name, got, rec.Hash)
	}
	return got, nil
}

// runtimeFor is the worker's runtime folder of ref, re-checked against
// the hash the job asks for and held for the job until it calls release
// (once, when it has ended).
func (d *daemon) runtimeFor(ref sandbox.CapabilityRef) (dir string, release func(), err error) {
	if !capNamePattern.MatchString(ref.Name) {
		return "", nil, fmt.Errorf("capability name %q is malformed", ref.Name)
	}
	d.capMu.Lock()
	defer d.capMu.Unlock()
	sum, err := d.verifyCapability(ref.Name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("capability %s is not installed on this worker (run simjecture worker prepare ID --capabilities DIR)", ref.Name)
	}
	if err != nil {
		return "", nil, err
	}
	if sum != ref.Hash {
		return "", nil, fmt.Errorf("capability %s on this worker has manifest hash %s, the study froze %s", ref.Name, sum, ref.Hash)
	}
	dir = d.capRuntime(ref.Name, sum)
	return dir, d.hold(ref.Name, dir), nil
}

// installCapability answers opCapability: present when that hash is
// installed with the files' executable bits as shipped, missing with the
// blobs still to put, else installed from them (Modes: how many files were
// installed only for their mode).
func (d *daemon) installCapability(f frame) (capabilityReply, error) {
	var a capabilityArgs
	if err := json.Unmarshal(f.Body, &a); err != nil {
		return capabilityReply{}, fmt.Errorf("capability: %w", err)
	}
	if err := checkCapArgs(a); err != nil {
		return capabilityReply{}, err
	}
	d.capMu.Lock()
	defer d.capMu.Unlock()
	modes := 0
	if sum, err := d.verifyCapability(a.Name); err == nil && sum == a.Hash {
		if modes = modesDiffering(d.capRuntime(a.Name, sum), a.Files); modes == 0 {
			return capabilityReply{Status: capPresent}, nil
		}
	}
	var missing []blobState
	seen := map[string]bool{}
	for _, file := range a.Files {
		if !seen[file.SHA256] && !d.blobComplete(file.SHA256) {
			seen[file.SHA256] = true
			missing = append(missing, blobState{SHA256: file.SHA256, Have: d.blobHave(file.SHA256)})
		}
	}
	if len(missing) > 0 {
		return capabilityReply{Status: capMissing, Missing: missing}, nil
	}
	if err := d.materialise(a); err != nil {
		return capabilityReply{}, err
	}
	return capabilityReply{Status: capInstalled, Modes: modes}, nil
}

func checkCapArgs(a capabilityArgs) error {
	if !capNamePattern.MatchString(a.Name) || !shaPattern.MatchString(a.Hash) || !json.Valid(a.Manifest) {
		return fmt.Errorf("capability: malformed name, hash or manifest")
	}
	for _, file := range a.Files {
		if clean := path.Clean(file.Rel); clean != file.Rel || path.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, "../") ||
			!shaPattern.MatchString(file.SHA256) {
			return fmt.Errorf("capability %s: file %q is malformed", a.Name, file.Rel)
		}
	}
	return nil
}

// materialise makes the runtime of a in a fresh folder from the blobs,
// checks its hash, puts it in place as ROOT/capabilities/NAME/runtime-HASH,
// records it as the installed version and removes the versions no job
// uses; d.capMu held.
func (d *daemon) materialise(a capabilityArgs) error {
	home := filepath.Join(d.capsDir(), a.Name)
	if err := errors.Join(ensurePrivateDir(d.capsDir()), ensurePrivateDir(home)); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(home, ".new-")
	if err != nil {
		return fmt.Errorf("capability %s: %w", a.Name, err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("capability %s: %w", a.Name, err)
	}
	for _, file := range a.Files {
		if err := d.copyBlob(file, filepath.Join(tmp, filepath.FromSlash(file.Rel))); err != nil {
			return fmt.Errorf("capability %s: %w", a.Name, err)
		}
	}
	if got, err := runtimeHash(a.Manifest, tmp); err != nil || got != a.Hash {
		return errors.Join(err, fmt.Errorf("capability %s: what arrived hashes to %s, not %s (discarded)", a.Name, got, a.Hash))
	}
	if err := d.placeRuntime(a, tmp); err != nil {
		return err
	}
	rec, _ := json.Marshal(capRecord{Name: a.Name, Hash: a.Hash, Manifest: a.Manifest})
	if err := writePrivate(filepath.Join(home, "capability.json"), rec); err != nil {
		return err
	}
	d.pruneCapability(a.Name)
	return nil
}

// runtimeHash is the capability hash of manifest with the runtime folder dir.
func runtimeHash(manifest json.RawMessage, dir string) (string, error) {
	runtime, err := directoryHash(dir)
	if err != nil {
		return "", err
	}
	return sandbox.CapabilityHash(manifest, runtime)
}

// copyBlob writes the blob of file to dst with its shipped mode.
func (d *daemon) copyBlob(file capFile, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("runtime folder: %w", err)
	}
	src, err := os.Open(d.blobPath(file.SHA256))
	if err != nil {
		return fmt.Errorf("blob of %s: %w", file.Rel, err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, shippedMode(file.Mode))
	if err != nil {
		return fmt.Errorf("runtime file: %w", err)
	}
	_, err = io.Copy(out, src)
	if err == nil {
		err = out.Chmod(shippedMode(file.Mode)) // whatever the daemon's umask
	}
	return errors.Join(err, out.Close())
}
