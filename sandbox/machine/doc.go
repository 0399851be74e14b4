// Package machine is the table of machines experiments may run on: this host
// (`local`) and execution workers reached with the system OpenSSH client
// (`ssh`). Each kind is one row of kindTable (table.go) with its profile
// checks and its constructor; a worker's profile is a JSON file in
// $SIMJECTURE_CONFIG/workers/ (registry.go).
//
// # The SSH worker
//
// The coordinator (this host) keeps one long-lived `ssh` session per worker
// running `ROOT/bin/simjecture-<sha256> worker serve --root ROOT` there. The
// session relays framed requests (frame.go) to the worker's daemon (daemon.go),
// which owns the experiments: it runs each one with sandbox.Run under the
// worker's execution backend and keeps its state under ROOT/state, so a
// dropped connection loses nothing and a new session re-attaches by
// experiment id. A daemon left without a session for the orphan grace stops
// its experiments.
package machine
