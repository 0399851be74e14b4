package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/simjecture/simjecture/sandbox"
)

// ErrUnreachable is transport uncertainty: the worker could not be reached
// or the connection broke. It never means an experiment failed.
var ErrUnreachable = errors.New("worker unreachable")

// ErrHostKey is a worker whose host key is not enrolled.
var ErrHostKey = errors.New("host key not trusted")

// sshTarget builds the system ssh client's command lines for one profile.
type sshTarget struct{ p Profile }

// controlDir is our 0700 folder for ControlMaster sockets: the shared
// simjecture-ssh-UID in the temporary folder, or, when another account
// took that name first, a private one of this process.
func controlDir() (string, error) {
	ctlDir.once.Do(func() {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("simjecture-ssh-%d", os.Geteuid()))
		if err := ensurePrivateDir(dir); err == nil {
			ctlDir.dir = dir
			return
		}
		// The shared name is taken (another account made it first, or it
		// is not private): a folder of this process's own, random name.
		dir, err := os.MkdirTemp("", fmt.Sprintf("simjecture-ssh-%d-*", os.Geteuid()))
		if err == nil {
			err = ensurePrivateDir(dir)
		}
		ctlDir.dir, ctlDir.err = dir, err
	})
	if ctlDir.err != nil {
		return "", fmt.Errorf("ssh control folder: %w", ctlDir.err)
	}
	return ctlDir.dir, nil
}

// ctlDir is the control folder this process chose, once.
var ctlDir struct {
	once sync.Once
	dir  string
	err  error
}

// knownHosts is the known-hosts file the client checks host keys against.
func (t sshTarget) knownHosts() string {
	if t.p.KnownHosts != "" {
		return t.p.KnownHosts
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".ssh", "known_hosts")
}

// options are the ssh options every command line of the profile shares
// (the client's and its master's).
func (t sshTarget) options() []string {
	a := []string{"-p", strconv.Itoa(t.p.Port),
		"-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=" + t.knownHosts(),
		"-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-o", "ConnectTimeout=10",
		"-o", "LogLevel=ERROR"}
	if t.p.User != "" {
		a = append(a, "-l", t.p.User)
	}
	if t.p.IdentityFile != "" {
		a = append(a, "-i", t.p.IdentityFile, "-o", "IdentitiesOnly=yes")
	}
	return a
}

// argv is the ssh command line that runs remote (already shell-quoted) as
// a client of the master listening on ctl: never a master itself, so no
// ssh of ours forks one into the background.
func (t sshTarget) argv(ctl, remote string) []string {
	a := append([]string{"-T"}, t.options()...)
	a = append(a, "-o", "ControlMaster=no", "-o", "ControlPath="+ctl)
	return append(a, "--", t.p.Host, remote)
}

// command is the ssh process that runs remote on the worker, over this
// process's master connection (started first when none runs).
func (t sshTarget) command(ctx context.Context, remote string) (*exec.Cmd, error) {
	ssh, err := sandbox.SystemProgram("ssh")
	if err != nil {
		return nil, fmt.Errorf("the OpenSSH client (ssh) is not on PATH: install openssh-client: %w", err)
	}
	ctl, err := t.master(ctx, ssh)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, ssh, t.argv(ctl, remote)...)
	cmd.Env = sshEnv()
	return cmd, nil
}

// sshEnv is our ssh client's environment: ours, with ssh's messages in C
// and SHELL=/bin/sh, since ssh runs LocalCommand, ProxyCommand and Match
// exec through $SHELL, and a zsh or fish would read its start files in the
// home (~/.zshenv), which an enclosed agent may write.
func sshEnv() []string { return append(os.Environ(), "LC_ALL=C", "SHELL=/bin/sh") }

// run runs a remote shell script with stdin and returns its stdout.
func (t sshTarget) run(ctx context.Context, script string, stdin []byte) (string, error) {
	cmd, err := t.command(ctx, "sh -c "+quote(script))
	if err != nil {
		return "", err
	}
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), t.explain(err, errb.String())
	}
	return out.String(), nil
}

// explain turns a failed ssh run into an error naming what went wrong.
func (t sshTarget) explain(err error, stderr string) error {
	msg := strings.TrimSpace(stderr)
	if len(msg) > 1000 {
		msg = msg[len(msg)-1000:]
	}
	switch {
	case strings.Contains(msg, "Host key verification failed") || strings.Contains(msg, "No "+"ED25519 host key is known") ||
		strings.Contains(msg, "host key is known") || strings.Contains(msg, "REMOTE HOST IDENTIFICATION HAS CHANGED"):
		return fmt.Errorf("worker %s: the host key of %s port %d is not trusted by %s (check its fingerprint, then add it, e.g. ssh-keyscan -p %d %s >> %s): %w",
			t.p.ID, t.p.Host, t.p.Port, t.knownHosts(), t.p.Port, t.p.Host, t.knownHosts(), ErrHostKey)
	case strings.Contains(msg, "simjecture-") && (strings.Contains(msg, "not found") || strings.Contains(msg, "No such file")):
		return fmt.Errorf("worker %s lacks this binary (%s): run simjecture worker prepare %s: %w", t.p.ID, msg, t.p.ID, ErrUnreachable)
	case strings.Contains(msg, "Permission denied"):
		return fmt.Errorf("worker %s: %s refused the login (%s): %w", t.p.ID, t.p.Host, msg, ErrUnreachable)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() != 255 {
		return fmt.Errorf("worker %s: remote command exited %d: %s", t.p.ID, ee.ExitCode(), msg)
	}
	return fmt.Errorf("worker %s: ssh %s port %d: %v: %s: %w", t.p.ID, t.p.Host, t.p.Port, err, msg, ErrUnreachable)
}

// quote is s as one single-quoted shell word.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// BinaryName is the worker's copy of a binary with hash sum.
func BinaryName(sum string) string { return "simjecture-" + sum }

// serveCommand is the remote command of a session.
func (t sshTarget) serveCommand(sum string) string {
	parts := []string{quote(filepath.Join(t.p.Root, "bin", BinaryName(sum))), "worker", "serve", "--root", quote(t.p.Root),
		"--grace", strconv.Itoa(t.p.Grace())}
	if t.p.RunAs != "" {
		parts = append(parts, "--run-as", quote(t.p.RunAs))
	}
	return strings.Join(parts, " ")
}
