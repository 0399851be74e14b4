package sandbox

import (
	"errors"
	"fmt"
	"strconv"
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

// parseHelperArgs parses what args renders (by hand: the flag package
// costs more than the rest of a request's handling).
func parseHelperArgs(args []string) (helperConfig, error) {
	var c helperConfig
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--":
			c.argv = args[i+1:]
			i = len(args)
			continue
		case "--exit-signals":
			c.exitSignals = true
			continue
		case "--proot-status":
			c.prootStatus = true
			continue
		case "--bwrap-gate":
			c.bwrapGate = true
			continue
		}
		if i+1 >= len(args) {
			return c, fmt.Errorf("helper: %s needs a value", a)
		}
		i++
		if err := c.set(a, args[i]); err != nil {
			return c, err
		}
	}
	if c.parentPID <= 0 || c.timeout <= 0 || len(c.argv) == 0 || c.stdout == "" || c.stderr == "" {
		return c, errors.New("helper: missing --parent-pid, --timeout-ms, --stdout, --stderr or command")
	}
	return c, nil
}

// set applies one flag that takes a value.
func (c *helperConfig) set(name, v string) error {
	var err error
	var ms int64
	switch name {
	case "--stdout":
		c.stdout = v
	case "--stderr":
		c.stderr = v
	case "--dir":
		c.dir = v
	case "--watch":
		c.watch = append(c.watch, v)
	case "--env":
		c.env = append(c.env, v)
	case "--parent-pid":
		c.parentPID, err = strconv.Atoi(v)
	case "--timeout-ms":
		ms, err = strconv.ParseInt(v, 10, 64)
		c.timeout = time.Duration(ms) * time.Millisecond
	case "--memory":
		c.memory, err = strconv.ParseInt(v, 10, 64)
	case "--workspace":
		c.workspace, err = strconv.ParseInt(v, 10, 64)
	case "--cpu":
		c.cpuLimit, err = strconv.ParseUint(v, 10, 64)
	case "--fsize":
		c.fsizeLimit, err = strconv.ParseUint(v, 10, 64)
	case "--as":
		c.asLimit, err = strconv.ParseUint(v, 10, 64)
	default:
		return fmt.Errorf("helper: unknown flag %q", name)
	}
	if err != nil {
		return fmt.Errorf("helper: %s: %w", name, err)
	}
	return nil
}
