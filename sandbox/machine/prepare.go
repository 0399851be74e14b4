package machine

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// prepareSSH ships this binary (by its sha256) to ROOT/bin and, for a root
// login, provisions the run-as account and installs the backends' tools.
func prepareSSH(ctx context.Context, p Profile, o Options, log func(string)) error {
	t := sshTarget{p: p}
	uid, arch, err := remoteIdentity(ctx, t)
	if err != nil {
		return err
	}
	if want := unameArch(); arch != want {
		return fmt.Errorf("worker %s is %s; this binary is built for %s: %w", p.ID, arch, want, ErrInvalid)
	}
	if uid == "0" && p.RunAs == "" {
		return fmt.Errorf("worker %s logs in as root: give it a run-as account (simjecture worker add %s … --run-as ACCOUNT); experiments never run as root: %w", p.ID, p.ID, ErrInvalid)
	}
	if err := shipBinary(ctx, t, o.SelfExe, log); err != nil {
		return err
	}
	if uid == "0" {
		return provision(ctx, t, log)
	}
	return reportTools(ctx, t, log)
}

func remoteIdentity(ctx context.Context, t sshTarget) (uid, arch string, err error) {
	out, err := t.run(ctx, "id -u; uname -m", nil)
	if err != nil {
		return "", "", err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return "", "", fmt.Errorf("worker %s: unexpected answer to id/uname: %q: %w", t.p.ID, out, ErrUnreachable)
	}
	return f[0], f[1], nil
}

func unameArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// shipBinary copies self to ROOT/bin/simjecture-<sha256> unless a copy
// with that hash is there; the worker re-hashes what it received.
func shipBinary(ctx context.Context, t sshTarget, self string, log func(string)) error {
	sum, err := fileSHA256(self)
	if err != nil {
		return err
	}
	dst := t.p.Root + "/bin/" + BinaryName(sum)
	have, err := t.run(ctx, fmt.Sprintf(`f=%s; if [ -f "$f" ]; then sha256sum < "$f" | cut -c1-64; fi`, quote(dst)), nil)
	if err != nil {
		return err
	}
	if strings.TrimSpace(have) == sum {
		log("binary " + BinaryName(sum) + " already on the worker")
		return nil
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		return fmt.Errorf("read this binary: %w", err)
	}
	script := fmt.Sprintf(`set -e; umask 022; mkdir -p %[1]s/bin; f=%[2]s; cat > "$f.tmp"; s=$(sha256sum < "$f.tmp" | cut -c1-64); `+
		`if [ "$s" != %[3]s ]; then rm -f "$f.tmp"; echo "received $s" >&2; exit 3; fi; chmod 0755 "$f.tmp"; mv "$f.tmp" "$f"; echo "$s"`,
		quote(t.p.Root), quote(dst), sum)
	got, err := t.run(ctx, script, bin)
	if err != nil {
		return fmt.Errorf("ship the binary: %w", err)
	}
	if strings.TrimSpace(got) != sum {
		return fmt.Errorf("ship the binary: the worker hashed %q, want %s", strings.TrimSpace(got), sum)
	}
	log("shipped " + BinaryName(sum) + " (sha256 checked on the worker)")
	return nil
}

// provision creates the run-as system account (no login shell, home under
// ROOT), gives it ROOT/state and ROOT/capabilities (where its daemon
// installs shipped capabilities), and installs Bubblewrap and PRoot with apt.
func provision(ctx context.Context, t sshTarget, log func(string)) error {
	u, root := quote(t.p.RunAs), quote(t.p.Root)
	// useradd is retried while another administrator holds the account database's lock (exit 10).
	script := fmt.Sprintf(`set -e; n=0; until id -u %[1]s >/dev/null 2>&1; do `+
		`rc=0; useradd --system --shell /usr/sbin/nologin --home-dir %[2]s/home --create-home %[1]s || rc=$?; `+
		`if [ $rc -eq 0 ]; then echo "created account %[3]s"; elif [ $rc -ne 10 ] || [ $n -ge 50 ]; then exit $rc; else n=$((n+1)); sleep 0.2; fi; done; `+
		`mkdir -p %[2]s/state %[2]s/home %[2]s/capabilities; chown root:root %[2]s %[2]s/bin; chmod 0755 %[2]s %[2]s/bin; `+
		`chown %[1]s: %[2]s/state %[2]s/home %[2]s/capabilities; chmod 0700 %[2]s/state %[2]s/capabilities; `+
		`need=; command -v bwrap >/dev/null || need="$need bubblewrap"; command -v proot >/dev/null || need="$need proot"; `+
		`if [ -n "$need" ]; then echo "installing$need"; DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need >/dev/null; fi; echo provisioned`,
		u, root, t.p.RunAs)
	out, err := t.run(ctx, script, nil)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			log(l)
		}
	}
	if err != nil {
		return fmt.Errorf("provision worker %s: %w", t.p.ID, err)
	}
	return nil
}

// reportTools tells a non-root login exactly what to install as root.
func reportTools(ctx context.Context, t sshTarget, log func(string)) error {
	out, err := t.run(ctx, `command -v bwrap >/dev/null || echo bubblewrap; command -v proot >/dev/null || echo proot`, nil)
	if err != nil {
		return err
	}
	if missing := strings.Fields(out); len(missing) > 0 {
		log(fmt.Sprintf("the worker lacks %s: install as root there: apt-get install -y %s", strings.Join(missing, " and "), strings.Join(missing, " ")))
	}
	return nil
}
