package machine

import (
	"os"
	"path/filepath"
)

// The files and folders the system ssh client of ours reads for a profile
// reached over ssh. The supervisor's ssh runs outside any agent's
// enclosure, so an agent that could rewrite them (its home is writable to
// it) could send our experiments to a host of its own choosing and forge
// their receipts; the enclosure binds them read-only (engine/settings.go).

// ReachedOverSSH reports whether the supervisor reaches p with ssh: an
// ssh worker, or a Slurm cluster through its login host.
func (p Profile) ReachedOverSSH() bool {
	return p.Kind == KindSSH || (p.Kind == KindSlurm && p.Host != "")
}

// SSHSettings are the paths p's ssh client reads besides the system's own
// settings: the ssh folder of this account (its config, keys and known
// hosts), the profile's known-hosts and identity files, and our control
// socket folder (made now when it is missing). None for a profile not
// reached over ssh.
func (p Profile) SSHSettings() []string {
	if !p.ReachedOverSSH() {
		return nil
	}
	var out []string
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".ssh"))
	}
	t := sshTarget{p: p}
	out = append(out, t.knownHosts())
	if p.IdentityFile != "" {
		out = append(out, p.IdentityFile)
	}
	if dir, err := controlDir(); err == nil {
		out = append(out, dir)
	}
	return out
}
