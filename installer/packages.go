package installer

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/simjecture/simjecture/sandbox"
)

// packageTool maps a Debian package to the executable it provides and the
// variable that may point the probes elsewhere.
var packageTools = []struct{ pkg, exe, env string }{
	{"proot", "proot", sandbox.EnvProot},
	{"bubblewrap", "bwrap", ""},
}

// missingPackages lists the packages whose executable is not found. An
// executable named by its SIMJECTURE_* variable counts as present.
func missingPackages(lookPath func(string) (string, error)) []string {
	var missing []string
	for _, t := range packageTools {
		if t.env != "" && os.Getenv(t.env) != "" {
			continue
		}
		if _, err := lookPath(t.exe); err != nil {
			missing = append(missing, t.pkg)
		}
	}
	return missing
}

// debianLike reports whether os-release names Debian or Ubuntu (ID or
// ID_LIKE).
func debianLike(osRelease string) bool {
	sc := bufio.NewScanner(strings.NewReader(osRelease))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), "=")
		if !ok || (key != "ID" && key != "ID_LIKE") {
			continue
		}
		for _, w := range strings.Fields(strings.Trim(val, `"'`)) {
			if w == "debian" || w == "ubuntu" {
				return true
			}
		}
	}
	return false
}

// ensurePackages installs what is missing with apt-get (account mode: as
// root, on Debian/Ubuntu, unless noSystem) or says what to install. It
// returns a warning for the summary, or "".
func ensurePackages(ctx context.Context, r *reporter, allowApt, noSystem bool) (string, error) {
	missing := missingPackages(exec.LookPath)
	if len(missing) == 0 {
		r.step("System packages: proot and bwrap are present; nothing to install")
		return "", nil
	}
	list := strings.Join(missing, " ")
	osr, _ := os.ReadFile("/etc/os-release")
	_, aptErr := systemTool("apt-get")
	switch {
	case noSystem:
		r.step("System packages: %s missing; not installed (--no-system-packages)", list)
	case !allowApt:
		r.step("System packages: %s missing; not installed (only the account installation runs apt-get)", list)
	case !debianLike(string(osr)) || aptErr != nil:
		r.step("System packages: %s missing; this is not Debian/Ubuntu, install them with the system package manager", list)
	default:
		r.step("System packages: installing %s with apt-get", list)
		env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if err := runLogged(ctx, r, env, "apt-get", "update"); err != nil {
			return "", fmt.Errorf("apt-get update: %w", err)
		}
		args := append([]string{"install", "-y", "--no-install-recommends"}, missing...)
		if err := runLogged(ctx, r, env, "apt-get", args...); err != nil {
			return "", fmt.Errorf("apt-get install %s: %w", list, err)
		}
		return "", nil
	}
	return "install " + list + " (Debian/Ubuntu: apt-get install " + list + ")", nil
}

// runLogged runs a command, echoing it and its output (indented) to the
// report. env nil means the installer's own environment.
func runLogged(ctx context.Context, r *reporter, env []string, name string, args ...string) error {
	r.detail("$ %s %s", name, strings.Join(args, " "))
	path, err := systemTool(name)
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrStep)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	w := r.indented()
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Run()
	w.flush()
	if err != nil {
		return fmt.Errorf("%s: %w: %w", name, err, ErrStep)
	}
	return nil
}

// systemTool finds a system program on PATH, then in the sbin and bin
// folders (root's PATH may lack /usr/sbin, e.g. after a plain `su`).
func systemTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		p := dir + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: %w", name, exec.ErrNotFound)
}
