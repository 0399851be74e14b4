// Package installer implements `simjecture install` (contract section 8).
//
// # Modes
//
// Run probes Bubblewrap first. As root on a host where that probe fails (no
// unprivileged user namespaces), it installs for a dedicated system account
// (ModeAccount): it creates the account (default "simjecture", home
// /var/lib/<account>, no login shell), installs the binary under
// /srv/simjecture (or --prefix) owned by the account, and writes a root-owned
// launcher at <prefix>/bin/simjecture that, started as root, drops to the
// account before anything the account could have changed is executed.
// Everywhere else (Bubblewrap works, or the caller is not root) it installs
// for the current user (ModeUser) and creates no account.
//
// # Layout
//
//	<prefix>/                      root:<account> 0750 (user mode: the user's, 0755)
//	<prefix>/.simjecture-install   the marker (JSON: account, mode, version)
//	<prefix>/app/                  root:<account> 0750
//	<prefix>/app/simjecture-<sha>  the binary, <account>:<account> 0750
//	<prefix>/app/current           symlink to the active binary, switched last
//	<prefix>/bin/simjecture        the launcher, root:root 0755 (a /bin/sh script)
//
// The launcher is a shell script rather than a hidden mode of our binary on
// purpose: root must never execute a file the account can write, and the
// binary is the account's. The script runs setpriv (or runuser) as root and
// only the dropped process executes the binary.
//
// # Safety
//
// Everything about the prefix and the account is checked before anything is
// written. An existing folder without our marker, or with a marker for
// another account, is left untouched (ErrUnmanaged); anything under /root is
// refused (ErrInvalid). The installer never changes host security settings:
// no sysctl, no setuid bits, nothing under /root.
package installer
