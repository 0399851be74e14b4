package installer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// checkTimeout bounds the smoke check and the final doctor run.
const checkTimeout = time.Minute

// execute carries out a decided plan, step by step.
func (p *plan) execute(ctx context.Context) error {
	warn, err := ensurePackages(ctx, p.r, p.mode == ModeAccount, p.o.NoSystemPackages)
	if err != nil {
		return err
	}
	if warn != "" {
		p.sum.warn("%s", warn)
	}
	if p.mode == ModeAccount {
		if err := p.setupAccount(ctx); err != nil {
			return err
		}
	}
	if err := p.preparePrefix(); err != nil {
		return err
	}
	name, err := p.installBinary(ctx)
	if err != nil {
		return err
	}
	p.summarize(name, p.checkAuto(ctx))
	return nil
}

func (p *plan) setupAccount(ctx context.Context) error {
	a := p.acct
	if a.Existed {
		p.r.step("Account %s exists (uid %d, home %s): reusing it", a.Name, a.UID, a.Home)
	} else {
		p.r.step("Creating the system account %s (home %s, no login shell)", a.Name, a.Home)
		created, err := createAccount(ctx, a.Name, p.r)
		if err != nil {
			return err
		}
		a = created
		p.r.detail("created uid %d, gid %d", a.UID, a.GID)
	}
	if err := ensureHome(a, !a.Existed); err != nil {
		return err
	}
	drop, err := dropCommand(a, systemTool)
	if err != nil {
		return err
	}
	p.acct, p.lay, p.drop = a, accountLayout(a), drop
	return nil
}

// preparePrefix creates (or re-asserts) the folders. A new prefix gets its
// marker at once, so an interrupted first run can simply be run again.
func (p *plan) preparePrefix() error {
	if p.marker == nil {
		p.r.step("Creating %s (%s)", p.prefix, p.describeOwner(p.lay.Prefix, p.lay.DirMode))
		if err := mkdirParents(filepath.Dir(p.prefix)); err != nil {
			return err
		}
	} else {
		p.r.step("Re-checking the folders of %s", p.prefix)
	}
	if err := mkdirOwned(p.prefix, p.lay.Prefix, p.lay.DirMode); err != nil {
		return err
	}
	if p.marker == nil {
		now := time.Now().UTC().Format(time.RFC3339)
		p.marker = &Marker{InstalledAt: now, AccountCreated: p.mode == ModeAccount && !p.acct.Existed}
		if err := p.writeMarker(""); err != nil {
			return err
		}
	}
	if err := mkdirOwned(filepath.Join(p.prefix, appDir), p.lay.App, p.lay.DirMode); err != nil {
		return err
	}
	if err := mkdirParents(filepath.Dir(filepath.Dir(p.launcher))); err != nil {
		return err
	}
	return mkdirOwned(filepath.Dir(p.launcher), p.lay.Bin, 0o755)
}

// mkdirParents creates the missing folders of dir, each 0755 whatever the
// umask, so the account can reach what lies below.
func mkdirParents(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := mkdirParents(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return os.Chmod(dir, 0o755)
}

// writeMarker writes the marker (root-owned in account mode).
func (p *plan) writeMarker(current string) error {
	m := *p.marker
	m.Mode, m.Account, m.UID, m.Launcher, m.Current = p.mode, p.acct.Name, p.acct.UID, p.launcher, current
	if p.mode == ModeAccount {
		m.Home = p.acct.Home
	}
	m.UpdatedAt = time.Now().UTC().Format(time.RFC3339)
	return writeAtomic(filepath.Join(p.prefix, MarkerName), encodeMarker(m), p.lay.Launcher, 0o644)
}

// installBinary stages the binary, checks it runs as the account, writes
// the launcher and switches app/current last; a failure before the switch
// leaves the previous binary in use.
func (p *plan) installBinary(ctx context.Context) (string, error) {
	app := filepath.Join(p.prefix, appDir)
	staged, name, err := stageBinary(p.source, app, p.lay.Binary, p.lay.BinaryMode)
	if err != nil {
		return "", err
	}
	p.r.step("Staged %s (%s)", name, p.describeOwner(p.lay.Binary, p.lay.BinaryMode))
	if err := p.smokeCheck(ctx, staged); err != nil {
		_ = os.Remove(staged)
		return "", err
	}
	if err := os.Rename(staged, filepath.Join(app, name)); err != nil {
		_ = os.Remove(staged)
		return "", fmt.Errorf("rename staged binary: %w", err)
	}
	if err := p.writeLauncher(); err != nil {
		return "", err
	}
	prev, err := switchCurrent(app, name)
	if err != nil {
		return "", err
	}
	p.r.step("Switched %s to %s", filepath.Join(app, currentLink), name)
	if err := p.writeMarker(name); err != nil {
		return "", err
	}
	p.r.detail("marker %s: account %s", filepath.Join(p.prefix, MarkerName), p.acct.Name)
	if err := prune(app, name, prev); err != nil {
		p.sum.warn("could not remove old binaries: %v", err)
	}
	return name, nil
}

// smokeCheck runs the staged binary with --help (as the account, in
// account mode), which also proves the account can reach it.
func (p *plan) smokeCheck(ctx context.Context, staged string) error {
	argv := []string{staged, "--help"}
	who := "the current user"
	if p.mode == ModeAccount {
		env := []string{p.envPath, "-i", "PATH=" + defaultPath, "HOME=" + p.acct.Home}
		argv = append(append(append([]string{}, p.drop...), env...), argv...)
		who = p.acct.Name
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("the staged binary does not run as %s (%v): %s: %w", who, err, firstLine(string(out)), ErrStep)
	}
	p.r.step("Checked that the staged binary runs as %s", who)
	return nil
}

func (p *plan) writeLauncher() error {
	spec := launcherSpec{Binary: filepath.Join(p.prefix, appDir, currentLink)}
	if p.mode == ModeAccount {
		spec.Drop, spec.Env, spec.Acct = p.drop, p.envPath, p.acct
	}
	if err := writeAtomic(p.launcher, []byte(launcherText(spec)), p.lay.Launcher, 0o755); err != nil {
		return err
	}
	p.r.step("Wrote the launcher %s (%s)", p.launcher, p.describeOwner(p.lay.Launcher, 0o755))
	if p.mode == ModeAccount {
		p.r.detail("started as root it drops to %s with: %s", p.acct.Name, quoteAll(p.drop))
	}
	return nil
}

// checkAuto asks the installed launcher which backend auto selects.
func (p *plan) checkAuto(ctx context.Context) sandbox.Report {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	out, _ := exec.CommandContext(ctx, p.launcher, "doctor", "--execution-backend", "auto", "--json").Output()
	var rep sandbox.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		rep.Reason = "the installed launcher did not answer doctor: " + firstLine(string(out))
	}
	if rep.Selected != "" {
		p.r.step("Execution backend: auto selects %s for %s", rep.Selected, p.acct.Name)
	} else {
		p.r.step("Execution backend: auto finds no available backend for %s: %s", p.acct.Name, firstLine(rep.Reason))
		p.sum.warn("no execution backend is available to %s yet: %s %s", p.acct.Name, firstLine(rep.Reason), rep.Remedy)
	}
	if rep.Warning != "" {
		p.sum.warn("%s", rep.Warning)
	}
	return rep
}
