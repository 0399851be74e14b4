package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mattn/go-isatty"

	"github.com/simjecture/simjecture/engine"
)

// The surroundings of a command: terminals, the machine, the workspace
// folder, and JSON on stdout.

// workspaceRoot is where new studies go and the home screen looks:
// $SIMJECTURE_WORKSPACE, else ~/simjecture/studies.
func workspaceRoot() string {
	if w := os.Getenv("SIMJECTURE_WORKSPACE"); w != "" {
		return w
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "simjecture-studies"
	}
	return filepath.Join(home, "simjecture", "studies")
}

// checkWorkspace refuses a workspace root that cannot hold studies, naming
// $SIMJECTURE_WORKSPACE when that is where it came from.
func checkWorkspace() error {
	err := engine.CheckWorkspace(workspaceRoot())
	if v := os.Getenv("SIMJECTURE_WORKSPACE"); err != nil && v != "" {
		return fmt.Errorf("SIMJECTURE_WORKSPACE=%q: %w", v, err)
	}
	return err
}

// isTerminal reports whether a stream is a terminal.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// interactive reports whether stdin and stdout are both terminals, as a
// full-screen UI needs.
func interactive(io stdio) bool { return isTerminal(io.out) && isTerminal(io.in) }

// memoryMB is this machine's memory in MiB, or 0 when unknown.
func memoryMB() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit) >> 20
}

// printJSON prints v as indented JSON and returns the exit code.
func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(engine.TerminalSafeJSON(w))
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitAttention
	}
	return exitOK
}
