package provider

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLaunchLeavesNoProcessBehind runs agents that leave descendants behind
// in the ways that escape a process-group kill (setsid, a cleared
// environment, a double fork) and checks that the turn ends within a second
// of the agent exiting, of the cancel or of the allowance, and that nothing
// of the agent's tree is alive when RunLaunch returns.
func TestLaunchLeavesNoProcessBehind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string // writes the pids to leave behind to the file $PIDS, one a line
		pids     int    // how many lines $PIDS gets
		cancel   bool   // cancel once $PIDS is complete
		timeout  time.Duration
		timedOut bool
	}{
		{name: "exits, a setsid child holds stdout", pids: 1,
			script: `setsid sleep 300 & echo $! > "$PIDS"`},
		{name: "exits, a setsid child with a cleared environment holds stdout", pids: 1,
			script: `setsid env -i sleep 300 & echo $! > "$PIDS"`},
		{name: "exits, a double fork into a new session holds nothing", pids: 1,
			script: `setsid sh -c 'sleep 300 & echo $! > "$PIDS"' </dev/null >/dev/null 2>&1 & wait`},
		{name: "stays, cancelled", pids: 2, cancel: true,
			script: `setsid sleep 300 & echo $! > "$PIDS"; echo $$ >> "$PIDS"; sleep 300`},
		{name: "stays, ignores SIGTERM, cancelled", pids: 2, cancel: true,
			script: `trap '' TERM; setsid sh -c 'trap "" TERM; sleep 300' & echo $! > "$PIDS"; echo $$ >> "$PIDS"; sleep 300`},
		{name: "stays past its allowance", pids: 2, timeout: 300 * time.Millisecond, timedOut: true,
			script: `setsid sleep 300 & echo $! > "$PIDS"; echo $$ >> "$PIDS"; sleep 300`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pids")
			turn := Turn{Role: RoleWorker, Number: 1, Dir: dir, LogDir: filepath.Join(dir, "log"),
				Env: map[string]string{"PIDS": pidFile}, Timeout: 60 * time.Second}
			if tt.timeout > 0 {
				turn.Timeout = tt.timeout
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stopped time.Time
			if tt.cancel {
				go func() {
					for len(readPids(pidFile)) < tt.pids {
						time.Sleep(5 * time.Millisecond)
					}
					stopped = time.Now()
					cancel()
				}()
			}
			out, err := RunLaunch(ctx, turn, Launch{Executable: "sh", Args: []string{"-c", tt.script}, Grace: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			end := time.Now()
			pids := readPids(pidFile)
			if len(pids) != tt.pids {
				t.Fatalf("the agent recorded pids %v, want %d", pids, tt.pids)
			}
			took := end.Sub(stopped)
			if stopped.IsZero() {
				took = out.Duration - min(out.Duration, turn.Timeout)
				if !tt.timedOut {
					took = out.Duration
				}
			}
			t.Logf("the launch returned %v after the agent exited, was cancelled or ran out of time (turn %v, exit %d)",
				took.Round(time.Millisecond), out.Duration.Round(time.Millisecond), out.ExitCode)
			if took > time.Second {
				t.Errorf("the launch took %v to return, want within 1 s", took)
			}
			if out.TimedOut != tt.timedOut {
				t.Errorf("TimedOut = %v, want %v", out.TimedOut, tt.timedOut)
			}
			if out.Lingering {
				t.Error("Lingering = true, but every process of the tree was killed (the engine would not hash the turn's logs)")
			}
			for _, pid := range pids {
				if live(pid) {
					t.Errorf("process %d of the agent's tree is alive after the launch returned", pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

func readPids(path string) []int {
	b, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(b), "\n") {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestMarkSparesOthers checks that the mark names only its own launch: a
// process of another launch, and one without a mark, are not signalled.
func TestMarkSparesOthers(t *testing.T) {
	t.Parallel()
	a, b := newMark(), newMark()
	if a.tag == b.tag || string(a.env) == string(b.env) {
		t.Fatalf("two launches got the same mark: %x %q", a.tag, a.env)
	}
	if n := a.signal(0); n != 0 {
		t.Errorf("a fresh mark found %d processes, want 0", n)
	}
	if a.carries(os.Getpid()) {
		t.Error("the supervisor itself carries a launch's mark")
	}
}
