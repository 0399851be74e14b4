package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/e2e/slurmfix"
)

// slurmReceipt is what these tests read of a receipt run on a worker.
type slurmReceipt struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Machine string `json:"machine"`
	Error   string `json:"error"`
	Remote  *struct {
		Scheduler string `json:"scheduler"`
		Job       string `json:"job"`
		Node      string `json:"node"`
		State     string `json:"state"`
	} `json:"remote"`
}

// slurmReceipts reads the receipts of the study in dir.
func slurmReceipts(t *testing.T, dir string) []slurmReceipt {
	t.Helper()
	r := sj(t, "", "status", "--campaign", dir, "--json")
	var snap struct {
		Experiments []slurmReceipt `json:"experiments"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r)
	}
	return snap.Experiments
}

// addSlurmWorker adds the worker hpc on c with extra flags and returns the
// environment its commands need.
func addSlurmWorker(t *testing.T, c *slurmfix.Cluster, extra ...string) []string {
	t.Helper()
	envv := slurmWorkerEnv(t, c)
	args := append([]string{"worker", "add", "hpc", "--slurm", "--root", filepath.Join(c.Shared(), "root")}, extra...)
	if r := runWith(t, envv, time.Minute, args...); r.code != 0 {
		t.Fatalf("worker add: %s", r)
	}
	return envv
}

// startWith runs the binary in the background with extra environment.
func startWith(t *testing.T, extra []string, args ...string) *bg {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(env(), extra...)
	b := &bg{cmd: cmd, out: &bytes.Buffer{}, errb: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = b.out, b.errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(b.done)
	}()
	t.Cleanup(func() {
		if !b.exitedYet() {
			_ = cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

// checkSlurmReceipt checks that e ran as a job of c named in its receipt.
func checkSlurmReceipt(t *testing.T, c *slurmfix.Cluster, e slurmReceipt) {
	t.Helper()
	if e.Machine != "hpc" || e.Remote == nil || e.Remote.Scheduler != "slurm" || e.Remote.Node != c.Node {
		t.Errorf("receipt %s: machine %q remote %+v; want hpc, slurm, node %s", e.ID, e.Machine, e.Remote, c.Node)
		return
	}
	if _, err := strconv.Atoi(e.Remote.Job); err != nil {
		t.Errorf("receipt %s: remote job %q is not a Slurm job id", e.ID, e.Remote.Job)
	}
}

// TestSlurmStudyCompletes runs a whole study whose experiments run as
// Slurm jobs: every receipt succeeded and names its job and node, the
// study completes, verify passes and the queue is empty afterwards.
func TestSlurmStudyCompletes(t *testing.T) {
	c := slurmfix.Start(t, slurmfix.Options{})
	envv := addSlurmWorker(t, c, "--max-jobs", "2")
	camp := runSlurmStudy(t, c, envv)
	noJobFolders(t, filepath.Join(c.Shared(), "root"))
	r := sj(t, "", "watch", "--campaign", camp.dir)
	for _, want := range []string{`"machine":"hpc","node":"","state":"queued"`, `"machine":"hpc","node":"` + c.Node + `","state":"running"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no experiment_placed event with %s:\n%s", want, r)
		}
	}
}

// runSlurmStudy runs a study on the worker hpc of c and checks it: it
// completes, every receipt succeeded naming its job and node, verify
// passes and no job is left in squeue.
func runSlurmStudy(t *testing.T, c *slurmfix.Cluster, envv []string) campaign {
	t.Helper()
	camp := newCampaign(t, "cubes", "e2e-n: 300", "e2e-challenge-n: 30000")
	if r := runWith(t, envv, 3*time.Minute, camp.args(170, 60, "--worker", "hpc")...); r.code != 0 {
		t.Fatalf("study --worker hpc: %s", r)
	}
	if st := status(t, camp.dir); st.Status != "completed" {
		t.Errorf("status %q, want completed%s", st.Status, st.notes())
	}
	exps := slurmReceipts(t, camp.dir)
	if len(exps) < 2 {
		t.Fatalf("%d experiments, want the run and its challenge", len(exps))
	}
	for _, e := range exps {
		if e.Status != "succeeded" {
			t.Errorf("receipt %s: %s (%s), want succeeded", e.ID, e.Status, e.Error)
		}
		checkSlurmReceipt(t, c, e)
	}
	if r := sj(t, "", "verify", "--campaign", camp.dir); r.code != 0 {
		t.Errorf("verify: %s", r)
	}
	if !c.QueueEmpty() {
		t.Error("jobs left in squeue after the study")
	}
	return camp
}

// noJobFolders: once a study's receipts are recorded, the worker's
// SHARED_DIR keeps no job folder of it (staged inputs, records, outputs).
func noJobFolders(t *testing.T, root string) bool {
	t.Helper()
	left, err := os.ReadDir(filepath.Join(root, "jobs"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range left {
		id, _ := os.ReadFile(filepath.Join(root, "jobs", e.Name(), "job_id"))
		names, _ := os.ReadDir(filepath.Join(root, "jobs", e.Name()))
		var ns []string
		for _, n := range names {
			ns = append(ns, n.Name())
		}
		t.Errorf("job folder %s (job %s: %v) left in SHARED_DIR/jobs after the study", e.Name(), strings.TrimSpace(string(id)), ns)
	}
	return len(left) == 0
}

// squeueCount is the number of jobs squeue lists as pending or running.
func squeueCount(t *testing.T, c *slurmfix.Cluster) int {
	out, err := c.Run("squeue", "-h", "-o", "%i")
	if err != nil {
		t.Fatal(err)
	}
	return len(strings.Fields(out))
}
