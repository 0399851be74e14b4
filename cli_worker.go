package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/machine"
)

// envWorkerGrace presets a new worker profile's orphan grace in seconds
// (docs/workers.md; tests shorten it).
const envWorkerGrace = "SIMJECTURE_WORKER_ORPHAN_GRACE"

// workerSubcommands are the subcommands of `worker`; serve and daemon run
// on the worker itself and are not listed in the usage.
func workerSubcommands() []command {
	return []command{
		{"add", "add a worker profile: an SSH machine, or a Slurm cluster (--slurm)", workerAdd},
		{"prepare", "ship this binary to a worker and provision it, then check it", workerPrepare},
		{"check", "check a worker: protocol, clock, backend, capacity and one trivial experiment", workerCheck},
		{"list", "list the worker profiles", workerList},
		{"remove", "remove a worker profile", workerRemove},
		{"serve", "", workerServe},
		{"daemon", "", workerDaemon},
	}
}

// cmdWorker dispatches `worker SUBCOMMAND`.
func cmdWorker(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
		fmt.Fprintln(io.err, "Usage: simjecture worker add|prepare|check|list|remove … (each has --help)")
		for _, c := range workerSubcommands() {
			if c.summary != "" {
				fmt.Fprintf(io.err, "  %-8s %s\n", c.name, c.summary)
			}
		}
		if len(args) == 0 {
			return exitInvalid
		}
		return exitOK
	}
	for _, c := range workerSubcommands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], io)
		}
	}
	return fail(io, fmt.Errorf("unknown worker subcommand %q (add, prepare, check, list, remove): %w", args[0], errUsage))
}

func registry() (machine.Registry, error) {
	dir, err := machine.ConfigDir()
	if err != nil {
		return machine.Registry{}, err
	}
	return machine.NewRegistry(dir), nil
}

// workerOptions are what a machine needs from this host.
func workerOptions() (machine.Options, error) {
	self, err := os.Executable()
	if err != nil {
		return machine.Options{}, fmt.Errorf("this binary: %w", err)
	}
	dir, err := machine.ConfigDir()
	return machine.Options{SelfExe: self, ConfigDir: dir}, err
}

// invalid marks a profile validation error as exit 2.
func invalid(err error) error {
	if errors.Is(err, machine.ErrInvalid) || errors.Is(err, machine.ErrNotFound) {
		return fmt.Errorf("%w: %w", err, engine.ErrInvalid)
	}
	return err
}

func workerAdd(_ context.Context, args []string, io stdio) int {
	fs := newFlagSet("worker add ID", io)
	p := machine.Profile{Kind: machine.KindSSH}
	fs.StringVar(&p.Host, "host", "", "host name, address or ssh alias (required)")
	fs.IntVar(&p.Port, "port", 22, "ssh port")
	fs.StringVar(&p.User, "user", "", "login account (default: ssh's)")
	fs.StringVar(&p.IdentityFile, "identity-file", "", "private key file")
	fs.StringVar(&p.KnownHosts, "known-hosts", "", "known-hosts file with the worker's enrolled host key")
	fs.StringVar(&p.RunAs, "run-as", "", "account experiments run as (required for a root login)")
	fs.StringVar(&p.Root, "root", "", "the worker's folder (default /var/tmp/simjecture-worker-ID)")
	backend := fs.String("execution-backend", string(sandbox.Bubblewrap), "execution backend on the worker: "+strings.Join(executionBackendNames(), ", "))
	fs.IntVar(&p.CPUs, "cpus", 2, "CPU slots for admission")
	fs.Int64Var(&p.MemoryMB, "memory-mb", 4096, "memory for admission (MiB)")
	fs.IntVar(&p.MaxJobs, "max-jobs", 2, "experiments at once (for Slurm: jobs queued or running)")
	isSlurm := fs.Bool("slurm", false, "a Slurm cluster: each experiment one batch job (--root: a SHARED_DIR every node sees)")
	fs.StringVar(&p.Partition, "partition", "", "Slurm partition (default: the cluster's)")
	fs.StringVar(&p.Account, "account", "", "Slurm account (default: the user's)")
	if code, done := parse(fs, args, 1, io); done {
		return code
	}
	if fs.NArg() != 1 {
		return fail(io, fmt.Errorf("worker add needs the worker ID: %w", errUsage))
	}
	p.ID, p.ExecutionBackend = fs.Arg(0), sandbox.Backend(*backend)
	if err := checkAddFlags(fs, *isSlurm, p.Host); err != nil {
		return fail(io, err)
	}
	if *isSlurm {
		slurmProfile(&p)
	}
	if err := completeProfile(fs, &p); err != nil {
		return fail(io, invalid(err))
	}
	reg, err := registry()
	if err != nil {
		return fail(io, invalid(err))
	}
	if _, err := reg.Load(p.ID); err == nil {
		return fail(io, fmt.Errorf("worker %q exists (simjecture worker remove %s first): %w", p.ID, p.ID, engine.ErrInvalid))
	}
	if err := reg.Save(p); err != nil {
		return fail(io, invalid(err))
	}
	where := fmt.Sprintf("%s@%s:%d", p.User, p.Host, p.Port)
	if p.Kind == machine.KindSlurm {
		where = "slurm partition " + cmp.Or(p.Partition, "(default)")
		if p.Host != "" {
			where += fmt.Sprintf(" through login node %s@%s:%d", p.User, p.Host, p.Port)
		}
	}
	fmt.Fprintf(io.out, "added worker %s (%s, root %s); next: simjecture worker prepare %s\n", p.ID, where, p.Root, p.ID)
	return exitOK
}

// addUse is the kinds of worker a flag of `worker add` applies to.
type addUse int

const (
	forSSH        addUse = 1 << iota // an SSH worker
	forSlurm                         // a Slurm worker reached on this host
	forSlurmLogin                    // a Slurm worker through its login node (--host)
)

// addFlagUses are the flags of `worker add` that apply to some kinds of
// worker only (contract section 13); every other flag applies to all. A
// Slurm cluster allocates cpus and memory itself and runs jobs as its login
// account, and takes the SSH fields only for its login node.
var addFlagUses = map[string]addUse{
	"port": forSSH | forSlurmLogin, "user": forSSH | forSlurmLogin,
	"identity-file": forSSH | forSlurmLogin, "known-hosts": forSSH | forSlurmLogin,
	"run-as": forSSH, "cpus": forSSH, "memory-mb": forSSH,
	"partition": forSlurm | forSlurmLogin, "account": forSlurm | forSlurmLogin,
}

// checkAddFlags refuses the first flag given (in name order) that does not
// apply to the kind of worker being added.
func checkAddFlags(fs *pflag.FlagSet, isSlurm bool, host string) error {
	kind := forSSH
	switch {
	case isSlurm && host != "":
		kind = forSlurmLogin
	case isSlurm:
		kind = forSlurm
	}
	var err error
	fs.Visit(func(f *pflag.Flag) {
		use, limited := addFlagUses[f.Name]
		if err == nil && limited && use&kind == 0 {
			err = fmt.Errorf("%s: %w", misplacedFlag(f.Name, use, kind), engine.ErrInvalid)
		}
	})
	return err
}

// misplacedFlag says why flag (of use) does not apply to a worker of kind.
func misplacedFlag(flag string, use, kind addUse) string {
	switch {
	case kind == forSSH:
		return fmt.Sprintf("--%s is for a Slurm worker (--slurm)", flag)
	case use&forSlurmLogin != 0:
		return fmt.Sprintf("--%s is for the login node of a Slurm worker: give --host LOGIN too", flag)
	}
	return fmt.Sprintf("--%s is for an SSH worker: a Slurm worker (--slurm) takes no --%s", flag, flag)
}

// slurmProfile makes p a Slurm profile: its cluster allocates cpus and
// memory, so admission is bounded by --max-jobs; without a login node
// (--host) it has no port.
func slurmProfile(p *machine.Profile) {
	p.Kind = machine.KindSlurm
	if p.Host == "" {
		p.Port = 0
	}
	p.CPUs, p.MemoryMB = 65536, 16<<20
}

// completeProfile applies defaults, makes file paths absolute and validates.
func completeProfile(fs *pflag.FlagSet, p *machine.Profile) error {
	if err := machine.CheckID(p.ID); err != nil {
		return err
	}
	if !fs.Changed("root") {
		p.Root = "/var/tmp/simjecture-worker-" + p.ID
	}
	for _, f := range []struct {
		flag string
		path *string
	}{{"identity-file", &p.IdentityFile}, {"known-hosts", &p.KnownHosts}} {
		if *f.path != "" {
			abs, err := filepath.Abs(*f.path)
			if err != nil {
				return fmt.Errorf("%s: %w", *f.path, err)
			}
			if err := checkReadableFile(f.flag, abs); err != nil {
				return err
			}
			*f.path = abs
		}
	}
	if v := os.Getenv(envWorkerGrace); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("$%s %q must be a positive number of seconds: %w", envWorkerGrace, v, machine.ErrInvalid)
		}
		p.OrphanGrace = n
	}
	return machine.Validate(*p)
}

func loadWorker(fs *pflag.FlagSet, args []string, io stdio) (machine.Profile, int, bool) {
	if code, done := parse(fs, args, 1, io); done {
		return machine.Profile{}, code, true
	}
	if fs.NArg() != 1 {
		return machine.Profile{}, fail(io, fmt.Errorf("%s needs the worker ID: %w", fs.Name(), errUsage)), true
	}
	reg, err := registry()
	if err == nil {
		var p machine.Profile
		if p, err = reg.Load(fs.Arg(0)); err == nil {
			return p, exitOK, false
		}
	}
	return machine.Profile{}, fail(io, invalid(err)), true
}

func workerPrepare(ctx context.Context, args []string, io stdio) int {
	var capsDir string
	flags := func(fs *pflag.FlagSet) {
		fs.StringVar(&capsDir, "capabilities", "", "capabilities folder whose capabilities to ship to the worker (an SSH worker)")
	}
	return checkWorker(ctx, "prepare", args, io, flags, func(p machine.Profile, o machine.Options) error {
		info, err := machine.Describe(p.Kind)
		if err != nil {
			return err
		}
		var caps []machine.Capability
		if capsDir != "" {
			if caps, err = shippable(p, o, capsDir, io); err != nil {
				return err
			}
		}
		say := func(s string) { fmt.Fprintf(io.err, "worker %s: %s\n", p.ID, s) }
		if err := info.Prepare(ctx, p, o, say); err != nil {
			return err
		}
		if capsDir == "" {
			return nil // nothing to ship (a Slurm worker would refuse any)
		}
		return info.Ship(ctx, p, o, caps, say)
	})
}

// shippable reads the capabilities of dir a worker can take, saying which
// are left out, and refuses a folder with no manifests (the runtime folder
// passed by mistake, say) and a worker kind that takes none, before
// anything is sent.
func shippable(p machine.Profile, o machine.Options, dir string, io stdio) ([]machine.Capability, error) {
	caps, skipped, err := engine.ShippableCapabilities(dir)
	if err != nil {
		return nil, err
	}
	if len(caps) == 0 && len(skipped) == 0 {
		return nil, &engine.FieldError{Field: engine.FieldCapabilities, Problem: engine.Invalid,
			Err: fmt.Errorf("%s holds no capability manifests (<name>.json): nothing sent", dir)}
	}
	if err := machine.ShipCapabilities(context.Background(), p, o, nil, nil); err != nil {
		return nil, err
	}
	for _, s := range skipped {
		fmt.Fprintf(io.err, "worker %s: %s\n", p.ID, s)
	}
	return caps, nil
}

func workerCheck(ctx context.Context, args []string, io stdio) int {
	return checkWorker(ctx, "check", args, io, nil, func(machine.Profile, machine.Options) error { return nil })
}

// checkWorker is `worker prepare|check ID [--json]` (flags adds the
// subcommand's own): before runs first, then the check.
func checkWorker(ctx context.Context, sub string, args []string, io stdio, flags func(*pflag.FlagSet),
	before func(machine.Profile, machine.Options) error) int {
	fs := newFlagSet("worker "+sub+" ID", io)
	asJSON := fs.Bool("json", false, "print the check as JSON")
	if flags != nil {
		flags(fs)
	}
	p, code, done := loadWorker(fs, args, io)
	if done {
		return code
	}
	o, err := workerOptions()
	if err != nil {
		return fail(io, err)
	}
	if err := before(p, o); err != nil {
		return fail(io, invalid(err))
	}
	return checkAndPrint(ctx, p, o, io, *asJSON)
}

func checkAndPrint(ctx context.Context, p machine.Profile, o machine.Options, io stdio, asJSON bool) int {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	rep, err := machine.Probe(cctx, p, o)
	if err != nil {
		return fail(io, invalid(err))
	}
	if asJSON {
		printJSON(io.out, rep)
	} else {
		printCheck(io, rep)
	}
	if rep.Ready {
		return exitOK
	}
	return exitAttention
}

func printCheck(io stdio, rep machine.CheckReport) {
	state := "ready"
	if !rep.Ready {
		state = "NOT ready: " + rep.Reason
	}
	fmt.Fprintf(io.out, "worker %s: %s\n", rep.Worker, state)
	if rep.Protocol != "" {
		fmt.Fprintf(io.out, "  protocol %s, host %s, uid %d\n", rep.Protocol, rep.Host, deref(rep.UID))
	}
	if rep.ClockSkew != nil {
		fmt.Fprintf(io.out, "  clock skew %.3f s\n", *rep.ClockSkew)
	}
	if rep.Backend.Backend != "" {
		fmt.Fprintf(io.out, "  backend %s: available %t — %s\n", backendName(rep.Backend), rep.Backend.Available, rep.Backend.Reason)
	}
	fmt.Fprintf(io.out, "  capacity %d cpus, %d MiB, %d jobs\n", rep.CPUs, rep.MemoryMB, rep.MaxJobs)
	if rep.Experiment != nil {
		fmt.Fprintf(io.out, "  trivial experiment %s in %.3f s\n", rep.Experiment.Status, rep.Experiment.WallSeconds)
	}
}

func backendName(r sandbox.Report) sandbox.Backend {
	if r.Selected != "" {
		return r.Selected
	}
	return r.Backend
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func workerList(_ context.Context, args []string, io stdio) int {
	fs := newFlagSet("worker list", io)
	asJSON := fs.Bool("json", false, "print JSON")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	reg, err := registry()
	if err != nil {
		return fail(io, invalid(err))
	}
	profiles, err := reg.List()
	if err != nil {
		return fail(io, invalid(err))
	}
	if *asJSON {
		if profiles == nil {
			profiles = []machine.Profile{}
		}
		return printJSON(io.out, profiles)
	}
	for _, p := range profiles {
		fmt.Fprintf(io.out, "%-16s %-5s %s@%s:%d root %s backend %s (%d cpus, %d MiB, %d jobs)\n",
			p.ID, p.Kind, p.User, p.Host, p.Port, p.Root, p.ExecutionBackend, p.CPUs, p.MemoryMB, p.MaxJobs)
	}
	return exitOK
}

func workerRemove(_ context.Context, args []string, io stdio) int {
	fs := newFlagSet("worker remove ID", io)
	p, code, done := loadWorker(fs, args, io)
	if done {
		return code
	}
	reg, err := registry()
	if err == nil {
		err = reg.Remove(p.ID)
	}
	if err != nil {
		return fail(io, invalid(err))
	}
	fmt.Fprintf(io.out, "removed worker %s\n", p.ID)
	return exitOK
}

// workerServe is one coordinator session on the worker (started over ssh).
func workerServe(_ context.Context, args []string, io stdio) int {
	fs := newFlagSet("worker serve", io)
	var a machine.ServeArgs
	fs.StringVar(&a.Root, "root", "", "the worker's folder")
	fs.StringVar(&a.RunAs, "run-as", "", "account to drop to when started as root")
	grace := fs.Int("grace", machine.DefaultOrphanGrace, "seconds before orphaned experiments are stopped")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	a.Grace = time.Duration(*grace) * time.Second
	if err := machine.ServeMain(a, io.in, io.out); err != nil {
		fmt.Fprintf(io.err, "simjecture: %s\n", oneLine(err))
		return exitAttention
	}
	return exitOK
}

// workerDaemon owns a worker's experiments (started by serve).
func workerDaemon(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("worker daemon", io)
	root := fs.String("root", "", "the worker's folder")
	grace := fs.Int("grace", machine.DefaultOrphanGrace, "seconds before orphaned experiments are stopped")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	if err := machine.DaemonMain(ctx, *root, time.Duration(*grace)*time.Second); err != nil {
		return fail(io, err)
	}
	return exitOK
}

// workerState is one configured worker as doctor reports it.
type workerState struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Host  string `json:"host"`
	Ready bool   `json:"ready"`
	State string `json:"state"`
}

// workerStates connects to every configured worker (doctor).
func workerStates(ctx context.Context) []workerState {
	out := []workerState{}
	reg, err := registry()
	if err != nil {
		return out
	}
	profiles, err := reg.List()
	if err != nil {
		return append(out, workerState{ID: "?", State: err.Error()})
	}
	o, _ := workerOptions()
	for _, p := range profiles {
		state, ready := machine.State(ctx, p, o)
		out = append(out, workerState{ID: p.ID, Kind: string(p.Kind), Host: p.Host, Ready: ready, State: state})
	}
	return out
}
