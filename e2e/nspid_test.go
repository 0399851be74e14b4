package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hostPid maps a pid an agent reported from inside its enclosure (a pid
// namespace of its own, where the agent may be pid 2) to the pid this test
// sees: the process whose innermost NSpid is inner and whose working
// folder is cwd. Outside an enclosure NSpid holds the host pid alone, so
// the mapping is the identity. It returns 0 when no such process lives.
func hostPid(inner int, cwd string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if innermostPid(pid) != inner {
			continue
		}
		if dir, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && dir == cwd {
			return pid
		}
	}
	return 0
}

// innermostPid is the last pid of /proc/PID/status's NSpid line, or 0.
func innermostPid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("NSpid:")); ok {
			f := strings.Fields(string(rest))
			if len(f) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}
