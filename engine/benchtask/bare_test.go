package benchtask

import (
	"os/exec"
	"testing"
	"time"
)

// runBare runs runner.py in each folder with python3 and returns the seconds.
func runBare(b *testing.B, folders []string) float64 {
	start := time.Now()
	for _, f := range folders {
		cmd := exec.Command("python3", runnerName)
		cmd.Dir = f
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("bare run: %v\n%s", err, out)
		}
	}
	return time.Since(start).Seconds()
}
