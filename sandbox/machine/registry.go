package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// EnvConfig names the configuration folder (default ~/.config/simjecture).
const EnvConfig = "SIMJECTURE_CONFIG"

// ErrNotFound is a worker id with no profile.
var ErrNotFound = errors.New("no such worker")

// ConfigDir is $SIMJECTURE_CONFIG, else ~/.config/simjecture.
func ConfigDir() (string, error) {
	if d := os.Getenv(EnvConfig); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("$%s %q must be an absolute path: %w", EnvConfig, d, ErrInvalid)
		}
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("config folder: %w", err)
	}
	return filepath.Join(home, ".config", "simjecture"), nil
}

// Registry is the folder of worker profiles, CONFIG/workers.
type Registry struct{ dir string }

// NewRegistry is the registry under the configuration folder config.
func NewRegistry(config string) Registry { return Registry{dir: filepath.Join(config, "workers")} }

// Dir is the folder holding the profiles.
func (r Registry) Dir() string { return r.dir }

func (r Registry) path(id string) (string, error) {
	if err := CheckID(id); err != nil {
		return "", err
	}
	return filepath.Join(r.dir, id+".json"), nil
}

// Save validates p and writes it (0600, in a 0700 folder), atomically.
func (r Registry) Save(p Profile) error {
	if err := Validate(p); err != nil {
		return err
	}
	file, err := r.path(p.ID)
	if err != nil {
		return err
	}
	if err := ensurePrivateDir(r.dir); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("worker profile: %w", err)
	}
	return writePrivate(file, append(b, '\n'))
}

// Load reads and validates the profile of id.
func (r Registry) Load(id string) (Profile, error) {
	file, err := r.path(id)
	if err != nil {
		return Profile{}, err
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return Profile{}, fmt.Errorf("worker %q: %w (add it with: simjecture worker add %s --host H)", id, ErrNotFound, id)
	}
	if err != nil {
		return Profile{}, fmt.Errorf("worker %q: %w", id, err)
	}
	var p Profile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("worker %q: %s: %v: %w", id, file, err, ErrInvalid)
	}
	if p.ID != id {
		return Profile{}, fmt.Errorf("worker %q: %s holds id %q: %w", id, file, p.ID, ErrInvalid)
	}
	if err := Validate(p); err != nil {
		return Profile{}, fmt.Errorf("worker %q: %w", id, err)
	}
	return p, nil
}

// List returns every stored profile, by id; a broken one is an error.
func (r Registry) List() ([]Profile, error) {
	entries, err := os.ReadDir(r.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	var out []Profile
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		p, err := r.Load(id)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Remove deletes the profile of id.
func (r Registry) Remove(id string) error {
	file, err := r.path(id)
	if err != nil {
		return err
	}
	if err := os.Remove(file); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("worker %q: %w", id, ErrNotFound)
	} else if err != nil {
		return fmt.Errorf("remove worker %q: %w", id, err)
	}
	return nil
}

// ensurePrivateDir makes dir (0700) and refuses one that is a symlink, not
// ours, or open to others.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("private folder: %w", err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("private folder: %w", err)
	}
	if !info.IsDir() || info.Mode().Perm()&0o077 != 0 || !ownedByUs(info) {
		return fmt.Errorf("private folder %s must be a folder of this account with mode 0700 (it is %s): %w", dir, info.Mode(), ErrInvalid)
	}
	return nil
}

// writePrivate writes b to file with mode 0600 through a temporary file.
func writePrivate(file string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
