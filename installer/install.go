package installer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/simjecture/simjecture/sandbox"
)

// Mode says for whom an installation is.
type Mode string

// The installation modes.
const (
	// ModeAccount installs for a dedicated non-root account (root, on a
	// host where Bubblewrap fails).
	ModeAccount Mode = "account"
	// ModeUser installs for the current user (Bubblewrap works, or the
	// caller is not root).
	ModeUser Mode = "user"
)

// Defaults.
const (
	DefaultAccount   = "simjecture"
	DefaultPrefix    = "/srv/simjecture"
	rootUserPrefix   = "/usr/local/lib/simjecture"
	rootUserLauncher = "/usr/local/bin/simjecture"
)

// Options are the flags of `simjecture install`.
type Options struct {
	Prefix           string    // "" for the mode's default
	Account          string    // "" for DefaultAccount
	AccountSet       bool      // --account was given explicitly
	NoSystemPackages bool      // never run the system package manager
	Source           string    // binary to install; "" for this executable
	Out              io.Writer // step-by-step report and summary
}

// plan is one run of the installer: decided and checked first (nothing
// written), then executed.
type plan struct {
	o        Options
	r        *reporter
	sum      summary
	mode     Mode
	source   string
	prefix   string
	launcher string
	acct     account
	marker   *Marker // the existing installation's marker: an upgrade
	lay      layout
	drop     []string // account mode: privilege-drop argv prefix
	envPath  string
}

// Run installs simjecture as described in the package comment, printing
// each step and a final summary to o.Out. Errors wrap ErrInvalid (nothing
// written), ErrUnmanaged (left untouched), ErrAccount or ErrStep.
func Run(ctx context.Context, o Options) error {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Account == "" {
		o.Account = DefaultAccount
	}
	if err := checkInput(o); err != nil {
		return err
	}
	var decided bytes.Buffer
	p := &plan{o: o, r: &reporter{w: &decided}}
	fmt.Fprintln(&decided, "simjecture install")
	err := p.decide(ctx)
	if errors.Is(err, ErrInvalid) {
		return err // a refusal comes alone, without the probe lines
	}
	if _, werr := o.Out.Write(decided.Bytes()); werr != nil {
		return fmt.Errorf("write the report: %w", werr)
	}
	p.r.w = o.Out
	if err != nil {
		return err
	}
	if err := p.execute(ctx); err != nil {
		return err
	}
	p.sum.print(o.Out)
	return nil
}

// checkInput refuses the values that are wrong by themselves (the account
// name, the shape of --prefix) before anything is probed or printed.
func checkInput(o Options) error {
	if err := validateAccountName(o.Account); err != nil {
		return err
	}
	if o.Prefix == "" {
		return nil
	}
	_, err := validatePrefix(o.Prefix)
	return err
}

// decide (after checkInput) probes Bubblewrap, picks the mode and checks the prefix, the
// account and the launcher path. It writes nothing.
func (p *plan) decide(ctx context.Context) error {
	src, err := sourceBinary(p.o.Source)
	if err != nil {
		return err
	}
	p.source = src
	bw := sandbox.Probe(ctx, sandbox.Bubblewrap)
	root := os.Geteuid() == 0
	if bw.Available {
		p.r.step("Probing Bubblewrap: available (%s)", bw.Reason)
	} else {
		p.r.step("Probing Bubblewrap: NOT available: %s", firstLine(bw.Reason))
	}
	if root && !bw.Available {
		p.r.detail("root on a host without working user namespaces: installing for the dedicated account %s", p.o.Account)
		return p.decideAccount()
	}
	if root {
		p.r.detail("Bubblewrap works here: installing for the current user (root); no account is created")
	} else {
		p.r.detail("not root: installing for the current user; no account is created")
	}
	return p.decideUser()
}

func (p *plan) decideAccount() error {
	prefix, err := validatePrefix(orDefault(p.o.Prefix, DefaultPrefix))
	if err != nil {
		return err
	}
	a, err := lookupAccount(p.o.Account)
	if err != nil {
		return err
	}
	if err := checkAccount(a); err != nil {
		return err
	}
	if err := p.checkPrefix(prefix, a); err != nil {
		return err
	}
	if _, err := dropCommand(a, systemTool); err != nil {
		return err
	}
	if p.envPath, err = systemTool("env"); err != nil {
		return fmt.Errorf("env(1) not found: %w", ErrStep)
	}
	p.mode, p.prefix, p.acct = ModeAccount, prefix, a
	p.launcher = filepath.Join(prefix, binDir, "simjecture")
	return nil
}

// checkPrefix checks reachability by the account and our marker.
func (p *plan) checkPrefix(prefix string, a account) error {
	if err := checkReachable(resolveExisting(prefix), ids{UID: a.UID, GIDs: a.GIDs}, osStat); err != nil {
		return err
	}
	m, err := inspectPrefix(prefix, a.Name)
	if err != nil {
		return err
	}
	p.marker = m
	if m == nil {
		p.r.step("Checking %s: new installation, reachable by %s", prefix, a.Name)
	} else {
		p.r.step("Checking %s: our installation for %s (current %s): upgrading in place", prefix, a.Name, orDefault(m.Current, "none"))
	}
	return nil
}

func (p *plan) decideUser() error {
	u, err := user.Current()
	if err != nil {
		return fmt.Errorf("current user: %w", err)
	}
	if p.o.AccountSet {
		p.r.detail("--account %s does not apply: this installs for the current user %s", p.o.Account, u.Username)
	}
	prefix, launcher, err := userPaths(p.o.Prefix, u, os.Getenv("XDG_DATA_HOME"))
	if err != nil {
		return err
	}
	if prefix, err = validatePrefix(prefix); err != nil {
		return err
	}
	a, err := fromUser(u)
	if err != nil {
		return err
	}
	if err := p.checkPrefix(prefix, account{Name: a.Name, UID: 0}); err != nil {
		return err
	}
	if err := checkLauncherPath(launcher, prefix); err != nil {
		return err
	}
	p.mode, p.prefix, p.launcher, p.acct, p.lay = ModeUser, prefix, launcher, a, userLayout()
	return nil
}

// userPaths are the prefix and launcher of a current-user installation:
// --prefix and <prefix>/bin/simjecture; else, for root, /usr/local/lib and
// /usr/local/bin; else ~/.local/share/simjecture and ~/.local/bin.
func userPaths(prefix string, u *user.User, xdgData string) (string, string, error) {
	switch {
	case prefix != "":
		return prefix, filepath.Join(filepath.Clean(prefix), binDir, "simjecture"), nil
	case u.Uid == "0":
		return rootUserPrefix, rootUserLauncher, nil
	case u.HomeDir == "" || !filepath.IsAbs(u.HomeDir):
		return "", "", fmt.Errorf("no home folder for %s; give --prefix: %w", u.Username, ErrInvalid)
	}
	data := xdgData
	if data == "" || !filepath.IsAbs(data) {
		data = filepath.Join(u.HomeDir, ".local", "share")
	}
	return filepath.Join(data, "simjecture"), filepath.Join(u.HomeDir, ".local", "bin", "simjecture"), nil
}

// checkLauncherPath refuses to replace a file at a launcher path outside
// the prefix that we did not write.
func checkLauncherPath(launcher, prefix string) error {
	if strings.HasPrefix(launcher, prefix+"/") {
		return nil
	}
	if _, err := os.Lstat(launcher); err == nil && !isOurLauncher(launcher) {
		return fmt.Errorf("%s exists and was not written by simjecture install: %w", launcher, ErrUnmanaged)
	}
	return nil
}

// sourceBinary is the binary to install: src, or this executable.
func sourceBinary(src string) (string, error) {
	if src == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find this executable: %w", err)
		}
		src = exe
	}
	resolved, err := filepath.EvalSymlinks(src)
	if err != nil {
		return "", fmt.Errorf("binary to install: %w", err)
	}
	fi, err := os.Stat(resolved)
	if err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("binary to install %s is not a regular file: %w", resolved, ErrInvalid)
	}
	return resolved, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
