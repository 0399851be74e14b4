package installer

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLauncherText(t *testing.T) {
	acct := account{Name: "sj", UID: 998, GID: 997, Home: "/var/lib/sj"}
	drop := []string{"/usr/bin/setpriv", "--reuid=998", "--regid=997", "--clear-groups", "--inh-caps=-all", "--"}
	cases := []struct {
		name      string
		spec      launcherSpec
		want, not []string
	}{
		{"user", launcherSpec{Binary: "/opt/sj/app/current"},
			[]string{"#!/bin/sh\n", launcherSignature, "exec '/opt/sj/app/current' \"$@\"\n"},
			[]string{"setpriv", "env -i"}},
		{"user, quote in path", launcherSpec{Binary: "/opt/it's/app/current"},
			[]string{`exec '/opt/it'\''s/app/current' "$@"`}, nil},
		{"account", launcherSpec{Binary: "/srv/simjecture/app/current", Drop: drop, Env: "/usr/bin/env", Acct: acct},
			[]string{"#!/bin/sh\n", launcherSignature, "bin='/srv/simjecture/app/current'\n",
				`if [ "$(id -u)" != 0 ]; then`, "HOME='/var/lib/sj' USER='sj' LOGNAME='sj'",
				"SIMJECTURE_[A-Za-z0-9_]*",
				"exec '/usr/bin/setpriv' '--reuid=998' '--regid=997' '--clear-groups' '--inh-caps=-all' '--' '/usr/bin/env' -i \"$@\"\n"},
			[]string{"runuser"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := launcherText(c.spec)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("launcher lacks %q:\n%s", w, text)
				}
			}
			for _, n := range c.not {
				if strings.Contains(text, n) {
					t.Errorf("launcher contains %q:\n%s", n, text)
				}
			}
		})
	}
}

func TestDropCommand(t *testing.T) {
	a := account{Name: "sj", UID: 998, GID: 997}
	cases := []struct {
		name  string
		found []string
		want  []string
		err   error
	}{
		{"setpriv", []string{"setpriv", "runuser"}, []string{"/x/setpriv", "--reuid=998", "--regid=997", "--clear-groups", "--inh-caps=-all", "--"}, nil},
		{"runuser fallback", []string{"runuser"}, []string{"/x/runuser", "-u", "sj", "--"}, nil},
		{"neither", nil, nil, ErrStep},
	}
	for _, c := range cases {
		look := func(name string) (string, error) {
			if slices.Contains(c.found, name) {
				return "/x/" + name, nil
			}
			return "", errors.New("not found")
		}
		got, err := dropCommand(a, look)
		if !errors.Is(err, c.err) || !slices.Equal(got, c.want) {
			t.Errorf("%s: dropCommand = %v, %v; want %v, %v", c.name, got, err, c.want, c.err)
		}
	}
}

func TestIsOurLauncher(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, text string
		want       bool
	}{
		{"ours", launcherText(launcherSpec{Binary: "/x"}), true},
		{"foreign script", "#!/bin/sh\nexec /usr/bin/other \"$@\"\n", false},
		{"empty", "", false},
	}
	for _, c := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(p, []byte(c.text), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := isOurLauncher(p); got != c.want {
			t.Errorf("%s: isOurLauncher = %v, want %v", c.name, got, c.want)
		}
	}
	if isOurLauncher(filepath.Join(dir, "missing")) {
		t.Error("a missing file counts as our launcher")
	}
}

// fakeBinary prints its arguments, a separator and its environment, all
// NUL-separated.
const fakeBinary = "#!/bin/sh\nprintf '%s\\0' \"$@\"\nprintf -- '--ENV--\\0'\nexec env -0\n"

// TestAccountLauncherRuns runs the account launcher with a fake drop tool
// (it records its options and runs the rest) and a fake binary. As root it
// takes the dropping branch; otherwise the direct one.
func TestAccountLauncherRuns(t *testing.T) {
	dir := t.TempDir()
	bin := writeScript(t, dir, "binary", fakeBinary)
	record := filepath.Join(dir, "drop-args")
	drop := writeScript(t, dir, "drop", "#!/bin/sh\nwhile [ \"$1\" != -- ]; do printf '%s\\n' \"$1\" >> '"+record+"'; shift; done\nshift\nexec \"$@\"\n")
	envPath, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env(1)")
	}
	acct := account{Name: "sj", UID: 998, GID: 997, Home: "/var/lib/sj"}
	spec := launcherSpec{Binary: bin, Drop: []string{drop, "--reuid=998", "--"}, Env: envPath, Acct: acct}
	launcher := writeScript(t, dir, "launcher", launcherText(spec))
	args := []string{"doctor", "a b", "", "it's", "$HOME", "--x=1"}
	cmd := exec.Command(launcher, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "TERM=xterm", "SECRET_TOKEN=hunter2",
		"SIMJECTURE_BWRAP=/var/tmp/fake bwrap", "SIMJECTURE_MULTI=one\nSIMJECTURE_FAKE=1", "HOME=/root"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("launcher: %v", err)
	}
	gotArgs, env := splitFakeOutput(t, out)
	if !slices.Equal(gotArgs, args) {
		t.Fatalf("arguments %q, want %q", gotArgs, args)
	}
	if os.Geteuid() != 0 {
		if env["SECRET_TOKEN"] != "hunter2" || env["HOME"] != "/root" {
			t.Fatalf("started as non-root the launcher should run the binary as is; env %v", env)
		}
		return
	}
	checkCleanEnv(t, env, acct)
	rec, _ := os.ReadFile(record)
	if string(rec) != "--reuid=998\n" {
		t.Fatalf("drop tool got options %q", rec)
	}
}

func checkCleanEnv(t *testing.T, env map[string]string, acct account) {
	t.Helper()
	want := map[string]string{
		"HOME": acct.Home, "USER": acct.Name, "LOGNAME": acct.Name, "PATH": "/usr/bin:/bin",
		"LANG": "C.UTF-8", "TERM": "xterm",
		"SIMJECTURE_BWRAP": "/var/tmp/fake bwrap", "SIMJECTURE_MULTI": "one\nSIMJECTURE_FAKE=1",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	for k := range env {
		if _, ok := want[k]; !ok && k != "PWD" {
			t.Errorf("unexpected variable %s=%q in the account's environment", k, env[k])
		}
	}
}

func writeScript(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func splitFakeOutput(t *testing.T, out []byte) ([]string, map[string]string) {
	t.Helper()
	parts := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	i := slices.Index(parts, "--ENV--")
	if i < 0 {
		t.Fatalf("no separator in %q", out)
	}
	env := map[string]string{}
	for _, kv := range parts[i+1:] {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return parts[:i], env
}
