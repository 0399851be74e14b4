package benchtask

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sandboxPython is the python3 the sandbox's PATH finds, so the bare run
// uses the same interpreter (not, say, a pyenv shim earlier on the host's PATH).
func sandboxPython(b *testing.B) string {
	for _, dir := range strings.Split("/usr/local/bin:/usr/bin:/bin", ":") {
		p := filepath.Join(dir, "python3")
		if info, err := os.Stat(p); err == nil && info.Mode()&0o111 != 0 {
			return p
		}
	}
	b.Skip("no python3 on the sandbox's PATH")
	return ""
}

// runBare runs runner.py in each folder with python3 and returns the seconds.
func runBare(b *testing.B, python string, folders []string) float64 {
	start := time.Now()
	for _, f := range folders {
		cmd := exec.Command(python, runnerName)
		cmd.Dir = f
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("bare run: %v\n%s", err, out)
		}
	}
	return time.Since(start).Seconds()
}
