package sandbox

import (
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"
	"time"
)

// The hidden modes of our own binary. main.go dispatches
//
//	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
//		os.Exit(sandbox.HelperMain(os.Args[2:]))
//	}
const HelperArg = "__sandbox-runner"

// helperConfig is what Run tells the helper, passed as flags.
type helperConfig struct {
	parentPID   int
	timeout     time.Duration
	memory      int64 // resident bytes of the whole tree; 0 = no limit
	workspace   int64 // bytes under watch; 0 = no limit
	cpuLimit    uint64
	fsizeLimit  uint64
	asLimit     uint64
	exitSignals bool // the launcher reports a child's signal n as exit 128+n
	prootStatus bool // PRoot: exit 255 plus "terminated with signal N" on stderr
	bwrapGate   bool // bwrap holds its child on --block-fd until the limits are set
	watch       []string
	stdout      string
	stderr      string
	dir         string
	env         []string
	argv        []string
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// args renders cfg as helper flags, ending with "--" and the target argv.
func (c *helperConfig) args() []string {
	a := []string{
		"--parent-pid", strconv.Itoa(c.parentPID),
		"--timeout-ms", strconv.FormatInt(c.timeout.Milliseconds(), 10),
		"--memory", strconv.FormatInt(c.memory, 10),
		"--workspace", strconv.FormatInt(c.workspace, 10),
		"--cpu", strconv.FormatUint(c.cpuLimit, 10),
		"--fsize", strconv.FormatUint(c.fsizeLimit, 10),
		"--as", strconv.FormatUint(c.asLimit, 10),
		"--stdout", c.stdout, "--stderr", c.stderr, "--dir", c.dir,
	}
	if c.exitSignals {
		a = append(a, "--exit-signals")
	}
	if c.bwrapGate {
		a = append(a, "--bwrap-gate")
	}
	if c.prootStatus {
		a = append(a, "--proot-status")
	}
	for _, w := range c.watch {
		a = append(a, "--watch", w)
	}
	for _, e := range c.env {
		a = append(a, "--env", e)
	}
	return append(append(a, "--"), c.argv...)
}

func parseHelperArgs(args []string) (helperConfig, error) {
	var c helperConfig
	var ms int64
	var watch, env listFlag
	fs := flag.NewFlagSet(HelperArg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&c.parentPID, "parent-pid", 0, "")
	fs.Int64Var(&ms, "timeout-ms", 0, "")
	fs.Int64Var(&c.memory, "memory", 0, "")
	fs.Int64Var(&c.workspace, "workspace", 0, "")
	limitFlags(fs, &c.cpuLimit, &c.fsizeLimit, &c.asLimit)
	fs.BoolVar(&c.exitSignals, "exit-signals", false, "")
	fs.BoolVar(&c.prootStatus, "proot-status", false, "")
	fs.BoolVar(&c.bwrapGate, "bwrap-gate", false, "")
	fs.StringVar(&c.stdout, "stdout", "", "")
	fs.StringVar(&c.stderr, "stderr", "", "")
	fs.StringVar(&c.dir, "dir", "", "")
	fs.Var(&watch, "watch", "")
	fs.Var(&env, "env", "")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.timeout, c.watch, c.env, c.argv = time.Duration(ms)*time.Millisecond, watch, env, fs.Args()
	if c.parentPID <= 0 || c.timeout <= 0 || len(c.argv) == 0 || c.stdout == "" || c.stderr == "" {
		return c, errors.New("helper: missing --parent-pid, --timeout-ms, --stdout, --stderr or command")
	}
	return c, nil
}

func limitFlags(fs *flag.FlagSet, cpu, fsize, as *uint64) {
	fs.Uint64Var(cpu, "cpu", 0, "")
	fs.Uint64Var(fsize, "fsize", 0, "")
	fs.Uint64Var(as, "as", 0, "")
}
