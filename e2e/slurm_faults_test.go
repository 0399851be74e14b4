package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/e2e/slurmfix"
)

// slurmStudy is a busy study (its agent keeps one long sleeper running)
// on the Slurm worker hpc, supervised in the background.
type slurmStudy struct {
	camp campaign
	sup  *bg
	envv []string
}

func startSlurmStudy(t *testing.T, envv []string, wall int) slurmStudy {
	t.Helper()
	camp := newCampaign(t, "busy", "e2e-seconds: 300")
	sup := startWith(t, envv, camp.args(wall, 120, "--worker", "hpc")...)
	s := slurmStudy{camp: camp, sup: sup, envv: envv}
	waitFor(t, 30*time.Second, "the study to exist", func() bool {
		_, err := os.Stat(filepath.Join(camp.dir, "simjecture.db")) // renamed into place whole (docs/campaign.md)
		return err == nil
	})
	writeFile(t, filepath.Join(camp.dir, "research", "long.sh"), "sleep 300\n")
	return s
}

// run submits long.sh (key k) through `lab run` and returns its id.
func (s slurmStudy) run(t *testing.T, key string, timeout int) string {
	t.Helper()
	req := fmt.Sprintf(`{"source": "long.sh", "outputs": ["none.txt"], "key": %q, "timeout": %d, "resources": {"cpus": 1, "memory_mb": 256}}`, key, timeout)
	rep, r := lab(t, s.camp.dir, "run", req)
	var rec struct {
		ID string `json:"id"`
	}
	if !*rep.OK || json.Unmarshal(rep.Result, &rec) != nil {
		t.Fatalf("lab run: %s", r)
	}
	return rec.ID
}

// waitReceipts waits until the study's receipts satisfy cond, checking
// every poll that at most maxJobs jobs are in the queue.
func (s slurmStudy) waitReceipts(t *testing.T, c *slurmfix.Cluster, maxJobs int, timeout time.Duration, what string, cond func([]slurmReceipt) bool) []slurmReceipt {
	t.Helper()
	var last []slurmReceipt
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("receipts when the test failed: %+v", last)
		}
	})
	waitFor(t, timeout, what, func() bool {
		if n := squeueCount(t, c); n > maxJobs {
			t.Fatalf("%d jobs in squeue, more than --max-jobs %d", n, maxJobs)
		}
		if s.sup.exitedYet() {
			t.Fatalf("the supervisor exited:\n%s", s.sup.result())
		}
		last = slurmReceipts(t, s.camp.dir)
		return cond(last)
	})
	return last
}

func count(exps []slurmReceipt, status string) int {
	n := 0
	for _, e := range exps {
		if e.Status == status {
			n++
		}
	}
	return n
}

// TestSlurmMaxJobsAndCancel keeps four or more long experiments wanting to run on
// a worker of --max-jobs 2: never more than two jobs are in the queue; an
// operator's scancel makes its receipt cancelled with the reason and lets
// a queued one in; study cancel leaves no job in squeue and every receipt
// final; verify passes.
func TestSlurmMaxJobsAndCancel(t *testing.T) {
	c := slurmfix.Start(t, slurmfix.Options{})
	s := startSlurmStudy(t, addSlurmWorker(t, c, "--max-jobs", "2"), 600)
	for _, k := range []string{"a", "b", "c", "d"} {
		s.run(t, k, 600)
	}
	s.waitReceipts(t, c, 2, 90*time.Second, "two running, the rest queued", func(exps []slurmReceipt) bool {
		return count(exps, "running") == 2 && count(exps, "queued") >= 2 && len(runningJobs(t, c)) == 2
	})
	jobs := runningJobs(t, c)
	for _, e := range slurmReceipts(t, s.camp.dir) {
		if e.Status == "running" && (e.Remote == nil || e.Remote.State == "" || !slices.Contains(jobs, e.Remote.Job)) {
			t.Errorf("running receipt %s names %+v, want its live job (one of %v) and state", e.ID, e.Remote, jobs)
		}
	}
	job := jobs[0]
	if _, err := c.Run("scancel", job); err != nil {
		t.Fatal(err)
	}
	exps := s.waitReceipts(t, c, 2, 60*time.Second, "the scancelled receipt and a queued one admitted", func(exps []slurmReceipt) bool {
		return count(exps, "cancelled") == 1 && count(exps, "running") == 2
	})
	for _, e := range exps {
		if e.Status == "cancelled" && (!strings.Contains(e.Error, "outside the study") || e.Remote == nil || e.Remote.Job != job) {
			t.Errorf("the scancelled receipt: error %q remote %+v; want the reason and job %s", e.Error, e.Remote, job)
		}
	}
	if r := sj(t, "", "cancel", "--campaign", s.camp.dir); r.code != 0 {
		t.Fatalf("cancel: %s", r)
	}
	if r := s.sup.wait(t, 90*time.Second); r.code != 0 {
		t.Fatalf("supervisor after cancel: %s", r)
	}
	if !c.QueueEmpty() {
		out, _ := c.Run("squeue", "-h", "--states=all", "-o", "%i %j %T %r")
		t.Errorf("jobs left in squeue after study cancel:\n%s\nsupervisor: %s", out, s.sup.result())
	}
	for _, e := range slurmReceipts(t, s.camp.dir) {
		if e.Status == "queued" || e.Status == "running" {
			t.Errorf("receipt %s still %s after cancel", e.ID, e.Status)
		}
	}
	if r := sj(t, "", "verify", "--campaign", s.camp.dir); r.code != 0 {
		t.Errorf("verify: %s", r)
	}
}

// TestSlurmJobTimeLimitGivesTimedOut lets a job meet its own --time before
// the runner's limit (a test margin of almost minus the timeout): Slurm
// kills it (Slurm rounds the limit up to a minute and checks every 30 s)
// and its receipt is timed_out.
func TestSlurmJobTimeLimitGivesTimedOut(t *testing.T) {
	c := slurmfix.Start(t, slurmfix.Options{})
	envv := append(addSlurmWorker(t, c, "--max-jobs", "2"), "SIMJECTURE_SLURM_TIME_MARGIN=-9m59s")
	s := startSlurmStudy(t, envv, 600)
	id := s.run(t, "limit", 600)
	exps := s.waitReceipts(t, c, 2, 150*time.Second, "the job killed by its time limit", func(exps []slurmReceipt) bool {
		for _, e := range exps {
			if e.ID == id && e.Status != "queued" && e.Status != "running" {
				return true
			}
		}
		return false
	})
	for _, e := range exps {
		if e.ID == id && e.Status != "timed_out" {
			t.Errorf("receipt %s: %s (%s), want timed_out", e.ID, e.Status, e.Error)
		}
	}
	if r := sj(t, "", "cancel", "--campaign", s.camp.dir); r.code != 0 {
		t.Fatalf("cancel: %s", r)
	}
	s.sup.wait(t, 90*time.Second)
	if r := sj(t, "", "verify", "--campaign", s.camp.dir); r.code != 0 {
		t.Errorf("verify: %s", r)
	}
}

// TestSlurmResumeAfterKill9 kills the supervisor with -9 while three jobs
// run: after the heartbeat's grace every job stops its experiment and
// leaves the queue, and resume records each receipt final (interrupted,
// naming the heartbeat), none lost.
func TestSlurmResumeAfterKill9(t *testing.T) {
	c := slurmfix.Start(t, slurmfix.Options{})
	envv := slurmWorkerEnv(t, c)
	add := append(envv, "SIMJECTURE_WORKER_ORPHAN_GRACE=3")
	if r := runWith(t, add, time.Minute, "worker", "add", "hpc", "--slurm", "--root", filepath.Join(c.Shared(), "root"), "--max-jobs", "3"); r.code != 0 {
		t.Fatalf("worker add: %s", r)
	}
	s := startSlurmStudy(t, envv, 600)
	first := []string{s.run(t, "a", 600), s.run(t, "b", 600), s.run(t, "c", 600)}
	s.waitReceipts(t, c, 3, 90*time.Second, "three jobs running", func(exps []slurmReceipt) bool {
		return count(exps, "running") == 3 && len(runningJobs(t, c)) == 3
	})
	var killed []slurmReceipt
	for _, e := range slurmReceipts(t, s.camp.dir) {
		if e.Status == "running" {
			killed = append(killed, e)
		}
	}
	_ = s.sup.cmd.Process.Kill()
	s.sup.wait(t, 10*time.Second)
	waitFor(t, 60*time.Second, "the orphaned jobs to leave the queue", c.QueueEmpty)
	res := startWith(t, envv, "resume", "--campaign", s.camp.dir, "--batch")
	waitFor(t, 60*time.Second, "every killed receipt final", func() bool {
		for _, e := range slurmReceipts(t, s.camp.dir) {
			for _, k := range killed {
				if e.ID == k.ID && (e.Status == "running" || e.Status == "queued") {
					return false
				}
			}
		}
		return true
	})
	for _, e := range slurmReceipts(t, s.camp.dir) {
		for _, k := range killed {
			if e.ID == k.ID && (e.Status != "interrupted" || !strings.Contains(e.Error, "heartbeat")) {
				t.Errorf("receipt %s: %s (%s), want interrupted by the heartbeat", e.ID, e.Status, e.Error)
			}
		}
	}
	if len(killed) != 3 || !strings.Contains(fmt.Sprint(killed), first[0]) {
		t.Errorf("killed receipts %+v, want three including %s", killed, first[0])
	}
	if r := sj(t, "", "cancel", "--campaign", s.camp.dir); r.code != 0 {
		t.Fatalf("cancel: %s", r)
	}
	res.wait(t, 90*time.Second)
	waitFor(t, 30*time.Second, "an empty queue", c.QueueEmpty)
	if r := sj(t, "", "verify", "--campaign", s.camp.dir); r.code != 0 {
		t.Errorf("verify: %s", r)
	}
}

// runningJobs lists the jobs squeue shows RUNNING.
func runningJobs(t *testing.T, c *slurmfix.Cluster) []string {
	t.Helper()
	out, err := c.Run("squeue", "-h", "-t", "RUNNING", "-o", "%i")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(out)
}
