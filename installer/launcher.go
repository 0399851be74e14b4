package installer

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// launcherSignature is the second line of every launcher we write; a file
// at the launcher's path without it is not ours and is never replaced.
const launcherSignature = "# simjecture-launcher: written by `simjecture install`"

// defaultPath is the PATH given to the account when the caller has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// launcherSpec is what a launcher needs to know.
type launcherSpec struct {
	Binary string   // <prefix>/app/current
	Drop   []string // account mode: the privilege-drop argv (setpriv … --) or nil
	Env    string   // account mode: absolute path of env(1)
	Acct   account  // account mode: the account
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// launcherText renders the launcher script.
func launcherText(s launcherSpec) string {
	if s.Drop == nil {
		return userLauncher(s)
	}
	return accountLauncher(s)
}

func userLauncher(s launcherSpec) string {
	return "#!/bin/sh\n" + launcherSignature + ".\n" +
		"# It runs the installed simjecture binary.\n" +
		"exec " + shellQuote(s.Binary) + " \"$@\"\n"
}

// accountLauncher is the root-owned script of an account installation.
// Started as root it builds a clean environment in the positional
// parameters (HOME, USER and LOGNAME of the account; PATH, LANG, TERM and
// every SIMJECTURE_* variable passed through), rotates the original
// arguments to the end and execs the drop command; root itself executes
// only this script, the drop tool and env(1), never the account's binary.
func accountLauncher(s launcherSpec) string {
	a := s.Acct
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n%s; owned by root, do not edit.\n", launcherSignature)
	fmt.Fprintf(&b, "# Started as root it drops to the account %s (uid %d, gid %d) with no\n", a.Name, a.UID, a.GID)
	b.WriteString("# supplementary groups and a clean environment: PATH, LANG, TERM and the\n" +
		"# SIMJECTURE_* variables pass through; HOME, USER and LOGNAME are the\n" +
		"# account's. Started as any other user it runs the installed binary.\n")
	fmt.Fprintf(&b, "bin=%s\ncaller_path=${PATH-}\nPATH=/usr/sbin:/usr/bin:/sbin:/bin\n", shellQuote(s.Binary))
	b.WriteString(`if [ "$(id -u)" != 0 ]; then
	PATH=$caller_path
	exec "$bin" "$@"
fi
n=$#
`)
	fmt.Fprintf(&b, "set -- \"$@\" HOME=%s USER=%s LOGNAME=%s \"PATH=${caller_path:-%s}\"\n",
		shellQuote(a.Home), shellQuote(a.Name), shellQuote(a.Name), defaultPath)
	b.WriteString(`if [ -n "${LANG+x}" ]; then set -- "$@" "LANG=$LANG"; fi
if [ -n "${TERM+x}" ]; then set -- "$@" "TERM=$TERM"; fi
for name in $(env | sed -n 's/^\(SIMJECTURE_[A-Za-z0-9_]*\)=.*/\1/p' | sort -u); do
	eval "if [ -n \"\${$name+x}\" ]; then set -- \"\$@\" \"$name=\${$name}\"; fi"
done
set -- "$@" "$bin"
while [ "$n" -gt 0 ]; do
	set -- "$@" "$1"
	shift
	n=$((n - 1))
done
`)
	fmt.Fprintf(&b, "exec %s %s -i \"$@\"\n", quoteAll(s.Drop), shellQuote(s.Env))
	return b.String()
}

// isOurLauncher reports whether the file at path was written by us.
func isOurLauncher(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; i < 2 && sc.Scan(); i++ {
		if bytes.HasPrefix(sc.Bytes(), []byte(launcherSignature)) {
			return true
		}
	}
	return false
}

// dropCommand is the argv prefix that runs a command as the account with no
// supplementary groups: setpriv where present, else runuser.
func dropCommand(a account, lookPath func(string) (string, error)) ([]string, error) {
	if p, err := lookPath("setpriv"); err == nil {
		return []string{p, fmt.Sprintf("--reuid=%d", a.UID), fmt.Sprintf("--regid=%d", a.GID),
			"--clear-groups", "--inh-caps=-all", "--"}, nil
	}
	if p, err := lookPath("runuser"); err == nil {
		return []string{p, "-u", a.Name, "--"}, nil
	}
	return nil, fmt.Errorf("neither setpriv nor runuser is installed (Debian/Ubuntu: util-linux): %w", ErrStep)
}
