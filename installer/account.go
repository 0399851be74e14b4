package installer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
)

// HomeBase is the folder holding a dedicated account's home: /var/lib/<name>.
const HomeBase = "/var/lib"

// homeBase is HomeBase; tests point it elsewhere.
var homeBase = HomeBase

// accountName is what useradd accepts portably for a system account.
var accountName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,30}$`)

// account is a dedicated account, existing or about to be created.
type account struct {
	Name    string
	UID     int // -1 until the account exists
	GID     int
	GIDs    []int
	Home    string
	Existed bool // it existed before this run
}

// validateAccountName refuses names useradd would reject, and root.
func validateAccountName(name string) error {
	if name == "root" || !accountName.MatchString(name) {
		return fmt.Errorf("--account %q is not a valid account name (lowercase letters, digits, _ and -; not root): %w", name, ErrInvalid)
	}
	return nil
}

// homeFor is the home folder of a dedicated account.
func homeFor(name string) string { return filepath.Join(homeBase, name) }

// lookupAccount returns the account, with Existed false (and UID -1) when
// there is none of that name.
func lookupAccount(name string) (account, error) {
	a := account{Name: name, UID: -1, GID: -1, Home: homeFor(name)}
	u, err := user.Lookup(name)
	var unknown user.UnknownUserError
	if errors.As(err, &unknown) {
		return a, nil
	}
	if err != nil {
		return a, fmt.Errorf("look up account %s: %w", name, err)
	}
	return fromUser(u)
}

func fromUser(u *user.User) (account, error) {
	a := account{Name: u.Username, Home: filepath.Clean(u.HomeDir), Existed: true}
	var err error
	if a.UID, err = strconv.Atoi(u.Uid); err != nil {
		return a, fmt.Errorf("account %s: uid %q: %w", u.Username, u.Uid, err)
	}
	if a.GID, err = strconv.Atoi(u.Gid); err != nil {
		return a, fmt.Errorf("account %s: gid %q: %w", u.Username, u.Gid, err)
	}
	a.GIDs = []int{a.GID}
	groups, _ := u.GroupIds() // best effort: the primary group is enough
	for _, g := range groups {
		if n, err := strconv.Atoi(g); err == nil && n != a.GID {
			a.GIDs = append(a.GIDs, n)
		}
	}
	return a, nil
}

// checkAccount refuses an existing account with uid 0 or another home, and
// a missing account whose home folder already exists (someone else's).
func checkAccount(a account) error {
	want := homeFor(a.Name)
	if !a.Existed {
		if _, err := os.Lstat(want); err == nil {
			return fmt.Errorf("account %s does not exist but %s does; remove it or choose another --account: %w", a.Name, want, ErrUnmanaged)
		}
		return nil
	}
	if a.UID == 0 {
		return fmt.Errorf("account %s has uid 0; the dedicated account must be unprivileged: %w", a.Name, ErrAccount)
	}
	if a.Home != want {
		return fmt.Errorf("account %s exists with home %s, not %s; choose another --account: %w", a.Name, a.Home, want, ErrAccount)
	}
	return nil
}

// nologinShell is the first no-login shell present on this host.
func nologinShell() string {
	for _, s := range []string{"/usr/sbin/nologin", "/sbin/nologin", "/usr/bin/false", "/bin/false"} {
		if _, err := os.Stat(s); err == nil {
			return s
		}
	}
	return "/usr/sbin/nologin"
}

// createAccount runs useradd for a system account with its own group, a
// home under HomeBase and no login shell, then reads it back.
func createAccount(ctx context.Context, name string, r *reporter) (account, error) {
	shell := nologinShell()
	args := []string{"--system", "--user-group", "--create-home", "--home-dir", homeFor(name), "--shell", shell, name}
	if err := runLogged(ctx, r, nil, "useradd", args...); err != nil {
		return account{}, fmt.Errorf("create account %s: %w", name, err)
	}
	a, err := lookupAccount(name)
	if err != nil {
		return a, err
	}
	if !a.Existed {
		return a, fmt.Errorf("account %s is missing after useradd: %w", name, ErrStep)
	}
	a.Existed = false
	return a, nil
}

// ensureHome makes sure the account's home exists. A home made now (by
// useradd or here) becomes the account's with mode 0750; an existing one is
// left as it is.
func ensureHome(a account, fresh bool) error {
	_, err := os.Lstat(a.Home)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(a.Home), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(a.Home), err)
		}
		if err := os.Mkdir(a.Home, 0o750); err != nil {
			return fmt.Errorf("create home %s: %w", a.Home, err)
		}
		fresh = true
	} else if err != nil {
		return fmt.Errorf("inspect home %s: %w", a.Home, err)
	}
	if !fresh {
		return nil
	}
	if err := os.Chown(a.Home, a.UID, a.GID); err != nil {
		return fmt.Errorf("chown home %s: %w", a.Home, err)
	}
	if err := os.Chmod(a.Home, 0o750); err != nil {
		return fmt.Errorf("chmod home %s: %w", a.Home, err)
	}
	return nil
}
