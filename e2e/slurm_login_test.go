package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/e2e/slurmfix"
)

// TestSlurmStudyThroughLoginNode runs a study whose experiments run as
// Slurm jobs submitted through a login node: 127.0.0.1 over our own sshd,
// logged in as root, whose sessions get SLURM_CONF from the sshd_config's
// SetEnv. The coordinator's own environment has no SLURM_CONF (and this
// host no /etc/slurm/slurm.conf), so every Slurm client ran on the login
// node; SHARED_DIR is staged and collected over the same transport. Every
// receipt succeeded naming job and node, verify passes, no job is left.
func TestSlurmStudyThroughLoginNode(t *testing.T) {
	c := slurmfix.Start(t, slurmfix.Options{})
	if _, err := os.Stat("/etc/slurm/slurm.conf"); err == nil {
		t.Fatal("this host has /etc/slurm/slurm.conf: the test could not tell the login node's clients from ours")
	}
	s := startSSHD(t, "SetEnv SLURM_CONF="+c.Conf)
	envv := []string{"SIMJECTURE_CONFIG=" + t.TempDir()}
	root := filepath.Join(c.Shared(), "login-root")
	add := []string{"worker", "add", "hpc", "--slurm", "--host", "127.0.0.1", "--port", fmt.Sprint(s.port), "--user", "root",
		"--identity-file", s.key, "--known-hosts", s.knownHosts, "--root", root, "--max-jobs", "2"}
	if r := runWith(t, envv, time.Minute, add...); r.code != 0 || !strings.Contains(r.stdout, "added worker hpc") {
		t.Fatalf("worker add: %s", r)
	}
	if r := runWith(t, envv, 2*time.Minute, "worker", "prepare", "hpc"); r.code != 0 {
		t.Fatalf("worker prepare: %s", r)
	}
	checkLoginWorker(t, envv)
	camp := runSlurmStudy(t, c, envv)
	if !noJobFolders(t, root) { // removed on the login node, over ssh
		log, _ := os.ReadFile(filepath.Join(camp.dir, "supervisor", "supervisor.log"))
		t.Logf("supervisor.log:\n%s", log)
	}
}

// checkLoginWorker runs worker check: sinfo and one trivial job, both
// through the login node.
func checkLoginWorker(t *testing.T, envv []string) {
	t.Helper()
	r := runWith(t, envv, 2*time.Minute, "worker", "check", "hpc", "--json")
	var rep struct {
		Ready  bool   `json:"ready"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || !rep.Ready {
		t.Fatalf("worker check through the login node: ready %v (%s), %v\n%s", rep.Ready, rep.Reason, err, r)
	}
}
