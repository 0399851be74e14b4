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
// name, the manifest hash and the manifest as hashed on the coordinator)
// and runtime/ (the files, made from the blobs). The daemon re-hashes each
// one when a session says hello and reports only those that still hash as
// shipped; a job with a capability re-checks it before it runs.

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
	runtime, err := sandbox.DirectoryHash(filepath.Join(dir, "runtime"))
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
// the hash the job asks for.
func (d *daemon) runtimeFor(ref sandbox.CapabilityRef) (string, error) {
	if !capNamePattern.MatchString(ref.Name) {
		return "", fmt.Errorf("capability name %q is malformed", ref.Name)
	}
	d.capMu.Lock()
	defer d.capMu.Unlock()
	sum, err := d.verifyCapability(ref.Name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("capability %s is not installed on this worker (run simjecture worker prepare ID --capabilities DIR)", ref.Name)
	}
	if err != nil {
		return "", err
	}
	if sum != ref.Hash {
		return "", fmt.Errorf("capability %s on this worker has manifest hash %s, the study froze %s", ref.Name, sum, ref.Hash)
	}
	return filepath.Join(d.capsDir(), ref.Name, "runtime"), nil
}

// installCapability answers opCapability: present when that hash is
// installed, missing with the blobs still to put, else installed from them.
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
	if sum, err := d.verifyCapability(a.Name); err == nil && sum == a.Hash {
		return capabilityReply{Status: capPresent}, nil
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
	return capabilityReply{Status: capInstalled}, nil
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

// materialise makes ROOT/capabilities/NAME from the blobs in a fresh
// folder, checks its hash, and only then puts it in place; d.capMu held.
func (d *daemon) materialise(a capabilityArgs) error {
	if err := ensurePrivateDir(d.capsDir()); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(d.capsDir(), ".new-"+a.Name+"-")
	if err != nil {
		return fmt.Errorf("capability %s: %w", a.Name, err)
	}
	defer os.RemoveAll(tmp)
	for _, file := range a.Files {
		if err := d.copyBlob(file, filepath.Join(tmp, "runtime", filepath.FromSlash(file.Rel))); err != nil {
			return fmt.Errorf("capability %s: %w", a.Name, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(tmp, "runtime"), 0o755); err != nil {
		return fmt.Errorf("capability %s: %w", a.Name, err)
	}
	rec, _ := json.Marshal(capRecord{Name: a.Name, Hash: a.Hash, Manifest: a.Manifest})
	if err := writePrivate(filepath.Join(tmp, "capability.json"), rec); err != nil {
		return err
	}
	runtime, err := sandbox.DirectoryHash(filepath.Join(tmp, "runtime"))
	if err != nil {
		return fmt.Errorf("capability %s: %w", a.Name, err)
	}
	if got, err := sandbox.CapabilityHash(a.Manifest, runtime); err != nil || got != a.Hash {
		return errors.Join(err, fmt.Errorf("capability %s: what arrived hashes to %s, not %s (discarded)", a.Name, got, a.Hash))
	}
	return swapInto(tmp, filepath.Join(d.capsDir(), a.Name))
}

// swapInto renames the folder tmp to dst, removing the folder it replaces.
func swapInto(tmp, dst string) error {
	old := tmp + ".old"
	if err := os.Rename(dst, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("install %s: %w", dst, err)
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("remove the replaced %s: %w", dst, err)
	}
	return nil
}

// copyBlob writes the blob of file to dst with the file's mode (at most 0755).
func (d *daemon) copyBlob(file capFile, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("runtime folder: %w", err)
	}
	src, err := os.Open(d.blobPath(file.SHA256))
	if err != nil {
		return fmt.Errorf("blob of %s: %w", file.Rel, err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, file.Mode.Perm()&0o755|0o400)
	if err != nil {
		return fmt.Errorf("runtime file: %w", err)
	}
	_, err = io.Copy(out, src)
	return errors.Join(err, out.Close())
}
