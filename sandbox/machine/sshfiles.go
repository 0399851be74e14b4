package machine

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"

	"github.com/simjecture/simjecture/sandbox"
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
// settings: the ssh folder of this account (its config, default keys and
// known hosts; ssh reads the one of the account's passwd entry, and $HOME's
// too when they differ), the files and programs its configuration names
// (sshConfigFiles) and the profile's known-hosts file. None for a profile
// not reached over ssh.
func (p Profile) SSHSettings() []string {
	if !p.ReachedOverSSH() {
		return nil
	}
	var out []string
	for _, home := range homes() {
		files, _ := sshConfigFiles(home)
		out = append(out, filepath.Join(home, ".ssh"), filepath.Join(home, ".ssh", "config")) // the file too: a symlink binds where it leads
		out = append(out, files...)
	}
	return append(out, sshTarget{p: p}.knownHosts())
}

// SSHIncludes are the patterns, absolute, of the files p's ssh
// configuration includes: what each matches may not grow (an agent could
// otherwise write the file a missing Include names). None for a profile
// not reached over ssh.
func (p Profile) SSHIncludes() []string {
	if !p.ReachedOverSSH() {
		return nil
	}
	var out []string
	for _, home := range homes() {
		_, includes := sshConfigFiles(home)
		out = append(out, includes...)
	}
	return out
}

// SSHSecrets are what lets a process of this account act on p as the
// supervisor: our control-socket folder (made now when it is missing),
// whose master connections run any command they are given, and the
// profile's own identity file. None for a profile not reached over ssh.
func (p Profile) SSHSecrets() []string {
	if !p.ReachedOverSSH() {
		return nil
	}
	var out []string
	if p.IdentityFile != "" {
		out = append(out, p.IdentityFile)
	}
	if dir, err := controlDir(); err == nil {
		out = append(out, dir)
	}
	return out
}

// homes are this account's home folders: $HOME, and its passwd entry's
// when that differs (where ssh looks).
func homes() []string {
	var out []string
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, home)
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" && !slices.Contains(out, u.HomeDir) {
		out = append(out, u.HomeDir)
	}
	return out
}

// slurmClients are the Slurm commands the supervisor runs on this host
// for a Slurm cluster reached without a login host.
var slurmClients = []string{"sbatch", "squeue", "sacct", "scancel", "sinfo"}

// Programs are the programs the supervisor runs on this host to reach p,
// as it finds them (the system's folders first): ssh for a profile reached
// over ssh, the Slurm clients for a cluster reached from here. The study
// pins them with its other programs.
func (p Profile) Programs() []string {
	var names []string
	switch {
	case p.ReachedOverSSH():
		names = []string{"ssh"}
	case p.Kind == KindSlurm:
		names = slurmClients
	}
	var out []string
	for _, n := range names {
		if path, err := sandbox.SystemProgram(n); err == nil {
			out = append(out, path)
		}
	}
	return out
}
