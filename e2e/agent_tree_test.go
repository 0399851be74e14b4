package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// treeAgent is a command agent that, every turn, starts a sleeper in a new
// session (setsid: out of its process group) with its stdout inherited,
// records the sleeper's pid in pids.<turn>, and then exits or, with "stays",
// sleeps itself. %[1]s is the sleeper (a symlink to sleep whose name holds
// the test's marker), %[2]s the folder of the pid files, %[3]s the mode.
const treeAgent = `#!/bin/sh
setsid %[1]s 300 &
echo $! > %[2]s/pids.$SIMJECTURE_TURN.tmp
mv %[2]s/pids.$SIMJECTURE_TURN.tmp %[2]s/pids.$SIMJECTURE_TURN
if [ %[3]s = stays ]; then exec %[1]s 300; fi
`

// TestCancelStopsTheAgentsTree: an agent that leaves a setsid child holding
// its stdout neither holds its turn open nor survives it: a turn whose agent
// exits ends and leaves no process behind, and cancel stops the study
// within 1 s with nothing of the agent's tree alive, whether the agent
// exited or stays.
func TestCancelStopsTheAgentsTree(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"exits", "stays"} {
		t.Run("agent "+mode, func(t *testing.T) {
			t.Parallel()
			c := newCampaign(t, "none")
			reapMarker(t, c.marker)
			tmp := t.TempDir()
			sleeper := filepath.Join(tmp, "sleep-"+c.marker)
			if err := os.Symlink(mustLookPath(t, "sleep"), sleeper); err != nil {
				t.Fatal(err)
			}
			exe := filepath.Join(tmp, "agent.sh")
			if err := os.WriteFile(exe, fmt.Appendf(nil, treeAgent, sleeper, tmp, mode), 0o755); err != nil {
				t.Fatal(err)
			}
			sup := start(t, "study", "--campaign", c.dir, "--hypothesis-file", c.hypothesis,
				"--instructions-file", c.instructions, "--backend", "command", "--executable", exe,
				"--execution-backend", "bubblewrap", "--wall-seconds", "300", "--turn-seconds", "120", "--batch")
			// 0 when it is gone already: an enclosed agent's pid namespace
			// ends with its turn.
			first := hostPid(waitPid(t, sup, filepath.Join(tmp, "pids.1")), filepath.Join(c.dir, "research"))
			if mode == "exits" {
				waitPid(t, sup, filepath.Join(tmp, "pids.2"))
				if alive(first) {
					t.Errorf("turn 1 ended, but the setsid child (pid %d) its agent left is alive", first)
				}
			}
			stopPromptly(t, c, sup, "cancel", "cancel with an agent that "+mode+" leaving a setsid child")
			if left := procsWith(c.marker); len(left) > 0 {
				t.Errorf("after the supervisor exited on cancel, processes of the agent's tree are alive:%s", describe(left))
			}
		})
	}
}

// waitPid waits for the agent to record a pid in path and returns it.
func waitPid(t *testing.T, sup *bg, path string) int {
	t.Helper()
	var pid int
	waitFor(t, 30*time.Second, "the agent to write "+filepath.Base(path), func() bool {
		if sup.exitedYet() {
			t.Fatalf("the supervisor exited early:\n%s", sup.result())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

func mustLookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is needed: %v", name, err)
	}
	return p
}
