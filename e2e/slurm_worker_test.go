package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/e2e/slurmfix"
)

// slurmWorkerEnv is the environment of commands that use a Slurm worker on
// c: its SLURM_CONF and a private configuration folder.
func slurmWorkerEnv(t *testing.T, c *slurmfix.Cluster) []string {
	t.Helper()
	return []string{"SLURM_CONF=" + c.Conf, "SIMJECTURE_CONFIG=" + t.TempDir()}
}

// TestSlurmWorkerAddAndCheck adds a Slurm cluster as a worker and checks
// it: sinfo confirms the partition and one real trivial experiment runs
// as a job; a missing partition or a bad flag is refused with exit 2 and
// nothing written.
func TestSlurmWorkerAddAndCheck(t *testing.T) {
	c := slurmfix.Start(t, slurmfix.Options{})
	envv := slurmWorkerEnv(t, c)
	root := filepath.Join(c.Shared(), "root")
	if r := runWith(t, envv, time.Minute, "worker", "add", "hpc", "--slurm", "--root", root, "--partition", c.Partition, "--max-jobs", "2"); r.code != 0 {
		t.Fatalf("worker add: %s", r)
	}
	r := runWith(t, envv, 2*time.Minute, "worker", "check", "hpc", "--json")
	var rep struct {
		Ready      bool   `json:"ready"`
		Reason     string `json:"reason"`
		Host       string `json:"host"`
		Experiment *struct {
			Status string `json:"status"`
		} `json:"experiment"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || !rep.Ready || rep.Experiment == nil || rep.Experiment.Status != "succeeded" {
		t.Fatalf("worker check: %v\n%s", err, r)
	}
	if !strings.Contains(rep.Host, c.Partition) {
		t.Errorf("check names %q, want the partition %s", rep.Host, c.Partition)
	}
	if r := runWith(t, envv, time.Minute, "doctor"); !strings.Contains(r.stdout, "ready (slurm partition "+c.Partition) {
		t.Errorf("doctor does not list the Slurm worker as ready:\n%s", r)
	}
	bins, _ := os.ReadDir(filepath.Join(root, "bin"))
	if len(bins) != 1 {
		t.Errorf("%d binaries shipped to the shared root, want 1", len(bins))
	}
	for _, bad := range [][]string{
		{"worker", "add", "hpc2", "--slurm", "--root", root, "--partition", "no/such"},
		{"worker", "add", "hpc3", "--slurm", "--host", "login1", "--run-as", "sj", "--root", root},
		{"worker", "add", "hpc4", "--partition", "debug", "--host", "h1"},
	} {
		if r := runWith(t, envv, time.Minute, bad...); r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: want exit 2 with one line:\n%s", bad, r)
		}
	}
	if r := runWith(t, envv, time.Minute, "worker", "list", "--json"); strings.Count(r.stdout, `"id"`) != 1 {
		t.Errorf("refused adds wrote profiles:\n%s", r)
	}
	if r := runWith(t, envv, time.Minute, "worker", "add", "gone", "--slurm", "--root", root, "--partition", "nosuch"); r.code != 0 {
		t.Fatalf("worker add: %s", r)
	}
	if r := runWith(t, envv, 2*time.Minute, "worker", "check", "gone"); r.code != 1 || !strings.Contains(r.stdout, "nosuch does not exist") {
		t.Errorf("check of a missing partition: want exit 1 naming it:\n%s", r)
	}
}
