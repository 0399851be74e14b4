package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/e2e/slurmfix"
)

// TestSlurmFixtureRunsAndCancelsJobs proves the test cluster is a real
// scheduler: a batch job runs on the node and writes to the shared folder,
// and scancel turns a running job into CANCELLED.
func TestSlurmFixtureRunsAndCancelsJobs(t *testing.T) {
	c := slurmfix.Start(t, slurmfix.Options{})
	out := filepath.Join(c.Shared(), "hello.txt")
	id, err := c.Run("sbatch", "--parsable", "--cpus-per-task=1", "--mem=64", "--time=1",
		"--output=/dev/null", "--wrap", "echo $SLURMD_NODENAME > "+out)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "job "+strings.TrimSpace(id)+" to write its file", func() bool {
		data, err := os.ReadFile(out)
		return err == nil && strings.TrimSpace(string(data)) == c.Node
	})
	id, err = c.Run("sbatch", "--parsable", "--time=1", "--output=/dev/null", "--wrap", "sleep 300")
	if err != nil {
		t.Fatal(err)
	}
	id = strings.TrimSpace(id)
	state := func() string {
		s, _ := c.Run("squeue", "-h", "--states=all", "-j", id, "-o", "%T")
		return strings.TrimSpace(s)
	}
	waitFor(t, 60*time.Second, "job "+id+" to run", func() bool { return state() == "RUNNING" })
	if _, err := c.Run("scancel", id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "job "+id+" to be cancelled", func() bool { return state() == "CANCELLED" })
}
