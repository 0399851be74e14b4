package machine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSSHConfigFiles: the files an ssh configuration includes (relative,
// absolute, globbed, nested), the programs and scripts its commands run
// (Match exec, "key = value", a leading exec), and the key, provider,
// agent and known-hosts files it names are found; %-tokens and "none" are
// not.
func TestSSHConfigFiles(t *testing.T) {
	home := t.TempDir()
	ssh := filepath.Join(home, ".ssh")
	other := filepath.Join(home, ".orbstack", "ssh")
	for _, d := range []string{filepath.Join(ssh, "conf.d"), other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	proxy := filepath.Join(home, ".local", "bin", "cloudflared")
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(ssh, "config"), "# the operator's\nInclude ~/.orbstack/ssh/config\nInclude conf.d/*.conf\n"+
		"Host gpu\n\tProxyCommand ~/.local/bin/cloudflared access ssh --hostname %h\n  IdentityFile=~/.ssh/id_gpu\n"+
		"Host *\n  ControlPath %d/.ssh/cm-%C\n  UserKnownHostsFile ~/.ssh/kh \"/srv/shared known_hosts\"\n  ProxyJump none\n")
	write(filepath.Join(other, "config"), "Host orb\n  IdentityFile %d/.orbstack/key\n  Include "+filepath.Join(home, "deeper.conf")+"\n")
	write(filepath.Join(home, "deeper.conf"), "CertificateFile ~/.ssh/id_gpu-cert.pub\n")
	write(filepath.Join(ssh, "conf.d", "a.conf"), "KnownHostsCommand /usr/bin/true\n"+
		"Host eq\n  ProxyCommand = exec ~/bin/proxy-eq %h %p\n  LocalCommand /bin/sh ~/bin/p.sh\n"+
		"Match host w1 exec \"~/bin/match-check %h\"\n  PKCS11Provider ~/lib/p11.so\n  IdentityAgent ~/.agent.sock\n")
	write(proxy, "#!/bin/sh\n")
	got, _ := sshConfigFiles(home)
	for _, want := range []string{filepath.Join(other, "config"), filepath.Join(home, "deeper.conf"), filepath.Join(ssh, "conf.d", "a.conf"),
		proxy, filepath.Join(ssh, "id_gpu"), filepath.Join(ssh, "kh"), "/srv/shared known_hosts", filepath.Join(ssh, "id_gpu-cert.pub"),
		"/usr/bin/true", filepath.Join(home, "bin", "proxy-eq"), filepath.Join(home, "bin", "p.sh"), filepath.Join(home, "bin", "match-check"),
		filepath.Join(home, "lib", "p11.so"), filepath.Join(home, ".agent.sock")} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not among %q", want, got)
		}
	}
	for _, p := range got {
		if !filepath.IsAbs(p) {
			t.Errorf("%q is not an absolute path", p)
		}
	}
}
