// Package sandbox runs one experiment in an execution backend and collects
// what it produced.
//
// # Backends
//
// Bubblewrap (the default) gives the experiment kernel namespaces: no
// network, a read-only system view, a private /tmp and a clean environment.
// proot-cooperative shows the same path view through PRoot and
// process-cooperative runs a plain process with virtual paths translated;
// both are "not a security sandbox", share the host network and are refused
// to root. Each backend is one row of the descriptor table (backend.go,
// read through Backends and Describe) with its probe and launcher in a file
// of its own. Probe and Select check which backend this host and account
// can use (see docs/security.md for what each one contains).
//
// # Running
//
// Run copies the sealed source and inputs into a private work folder,
// checking each copy against its recorded hash, and then hands the run to a
// persistent runner: our own binary in a hidden helper mode (HelperArg
// --serve, dispatched by main through HelperMain), started once per SelfExe
// per host process and restarted if it died. Run writes each request (start
// or cancel) to its stdin and reads one reply per finished run, both as gob
// streams (wire.go). The runner is a child subreaper with PR_SET_PDEATHSIG; a
// watcher on each target's pidfd, or the central reaper (on SIGCHLD where
// pidfds cannot be watched, see chld.go), hands its status to that run's
// watchdog. Each
// watchdog starts the backend's launcher in a new session with RLIMIT_CPU,
// RLIMIT_FSIZE, RLIMIT_AS and RLIMIT_CORE (and RLIMIT_RTTIME as the run's
// tag) set before any experiment code runs: normally the start gate the
// runner forked ahead sets them on itself and executes the launcher
// (gate.go); where no gate can run, they are set with prlimit(2): bwrap
// reports its child on --info-fd and holds it on --block-fd until then
// (bwrapgate.go); PRoot and native launchers are traced until the stop
// after their exec, limited, and detached (tracegate.go), or, where ptrace is
// not allowed, start behind a /bin/sh barrier blocked on a pipe. It samples the resident
// memory of the run's tree (the launcher's descendants and the orphans that
// belong to the run, see server.claims) every 50 ms, measures the workspace
// about every 500 ms, enforces the wall-time limit (SIGTERM, 2 s, SIGKILL),
// remembers every process by pid and start time, and kills every one still
// alive when the target exits and when the run is cancelled. When the host
// process dies or closes the runner's stdin, the runner kills every run's
// tree and exits. Where a writable cgroup v2 is delegated it also uses
// memory.max and cgroup.kill. With --config JSON instead of --serve the
// helper runs one experiment and prints one JSON report line.
//
// After the run, Run re-hashes the sealed copies (content and mode), collects
// the declared outputs that are plain files inside the work folder, and keeps
// bounded copies of stdout and stderr.
package sandbox
