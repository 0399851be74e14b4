package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The hidden modes of our own binary. main.go dispatches
//
//	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
//		os.Exit(sandbox.HelperMain(os.Args[2:]))
//	}
const HelperArg = "__sandbox-runner"

// configArg passes a one-shot helper its helperConfig as JSON:
// HelperArg --config JSON.
const configArg = "--config"

// helperConfig is what Run tells the helper: inside a runner request, or
// after configArg for a one-shot helper.
type helperConfig struct {
	ParentPID   int           `json:"parent_pid"`
	Timeout     time.Duration `json:"timeout"`
	Memory      int64         `json:"memory,omitempty"`    // resident bytes of the whole tree; 0 = no limit
	Workspace   int64         `json:"workspace,omitempty"` // bytes under watch; 0 = no limit
	CPULimit    uint64        `json:"cpu,omitempty"`
	FsizeLimit  uint64        `json:"fsize,omitempty"`
	ASLimit     uint64        `json:"as,omitempty"`
	ExitSignals bool          `json:"exit_signals,omitempty"` // the launcher reports a child's signal n as exit 128+n
	ProotStatus bool          `json:"proot_status,omitempty"` // PRoot: exit 255 plus "terminated with signal N" on stderr
	BwrapGate   bool          `json:"bwrap_gate,omitempty"`   // bwrap holds its child on --block-fd until the limits are set
	Shm         bool          `json:"shm,omitempty"`          // the experiment has a /dev/shm of its own, counted as memory (shm.go)
	Watch       []string      `json:"watch,omitempty"`
	Harness     []harnessFile `json:"harness,omitempty"` // the sealed copies in Watch: not the experiment's
	Stdout      string        `json:"stdout"`
	Stderr      string        `json:"stderr"`
	Dir         string        `json:"dir,omitempty"`
	Env         []string      `json:"env,omitempty"`
	Argv        []string      `json:"argv"`
	UsageEvery  time.Duration `json:"usage_every,omitempty"` // report live usage this often (serve mode); 0 = never
	NoGate      bool          `json:"no_gate,omitempty"`     // never the start gate (gate.go): the tests' and benchmarks' way to the ptrace stop

	release func() // the host's: lets go of what the launch line names (the /etc view); nil for none
}

// validate rejects a config the helper cannot run.
func (c *helperConfig) validate() error {
	if c.ParentPID <= 0 || c.Timeout <= 0 || len(c.Argv) == 0 || c.Stdout == "" || c.Stderr == "" {
		return errors.New("helper: missing parent pid, timeout, stdout, stderr or command")
	}
	return nil
}

// oneShotConfig reads a one-shot helper's arguments: configArg and the JSON.
func oneShotConfig(args []string) (helperConfig, error) {
	var c helperConfig
	if len(args) != 2 || args[0] != configArg {
		return c, fmt.Errorf("helper: usage: %s JSON", configArg)
	}
	if err := json.Unmarshal([]byte(args[1]), &c); err != nil {
		return c, fmt.Errorf("helper: config: %w", err)
	}
	return c, c.validate()
}
