package installer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MarkerName is the marker file in the prefix. A folder without it is not
// ours and is never touched.
const MarkerName = ".simjecture-install"

// managedBy is the marker's fixed managed_by value.
const managedBy = "simjecture install"

// Marker is the JSON content of the marker file.
type Marker struct {
	Format    int    `json:"format"`
	ManagedBy string `json:"managed_by"`
	Mode      Mode   `json:"mode"`
	Account   string `json:"account"`
	UID       int    `json:"uid"`
	Home      string `json:"home,omitempty"`
	// AccountCreated says this installer created the account (undo: userdel).
	AccountCreated bool   `json:"account_created,omitempty"`
	Launcher       string `json:"launcher"`
	Current        string `json:"current,omitempty"`
	InstalledAt    string `json:"installed_at"`
	UpdatedAt      string `json:"updated_at"`
}

// inspectPrefix decides whether prefix may be used for account. It returns
// (nil, nil) when prefix does not exist (a new installation), the marker
// when it is our installation for the same account (an upgrade), and an
// ErrUnmanaged error in every other case. It writes nothing.
func inspectPrefix(prefix, account string) (*Marker, error) {
	fi, err := os.Lstat(prefix)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", prefix, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link, not a simjecture installation: %w", prefix, ErrUnmanaged)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s exists and is not a folder: %w", prefix, ErrUnmanaged)
	}
	m, err := readMarker(prefix)
	if err != nil {
		return nil, err
	}
	if m.Account != account {
		return nil, fmt.Errorf("%s is a simjecture installation for account %q, not %q: %w", prefix, m.Account, account, ErrUnmanaged)
	}
	return m, nil
}

// readMarker reads and checks the marker of an existing folder.
func readMarker(prefix string) (*Marker, error) {
	path := filepath.Join(prefix, MarkerName)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s exists but has no %s marker, so it is not a simjecture installation: %w", prefix, MarkerName, ErrUnmanaged)
	}
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", path, ErrUnmanaged)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var m Marker
	if err := json.Unmarshal(data, &m); err != nil || m.ManagedBy != managedBy || m.Account == "" {
		return nil, fmt.Errorf("%s is not a valid simjecture install marker: %w", path, ErrUnmanaged)
	}
	return &m, nil
}

// encodeMarker renders the marker file's content.
func encodeMarker(m Marker) []byte {
	m.Format, m.ManagedBy = 1, managedBy
	data, _ := json.MarshalIndent(m, "", "  ") // a plain struct always encodes
	return append(data, '\n')
}
