package slurm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// supervisorArg makes the test binary a stand-in supervisor: it runs the
// jobs given as JSON on stdin on the cluster given as JSON in args[0] and
// prints "running KEY" as each job's experiment runs.
const supervisorArg = "__slurm-test-supervisor"

type supervisorInput struct {
	Cluster testCluster   `json:"cluster"`
	Grace   time.Duration `json:"grace"`
	Jobs    []Job         `json:"jobs"`
}

func supervisorMain([]string) int {
	var in supervisorInput
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	self, _ := os.Executable()
	c, err := New(Config{Root: in.Cluster.Shared + "/root", Backend: sandbox.Bubblewrap, Self: self,
		Grace: in.Grace, Exec: Local{Env: in.Cluster.env()}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, j := range in.Jobs {
		j.Progress = func(p Progress) {
			if p.State == "RUNNING" {
				mu.Lock()
				fmt.Printf("running %s\n", j.Key)
				mu.Unlock()
			}
		}
		wg.Go(func() { _, _ = c.Run(context.Background(), j) })
	}
	wg.Wait()
	return 0
}

// TestResumeAfterSupervisorKill kills a supervisor with -9 while three
// jobs run: the jobs whose experiments outlive the heartbeat's grace stop
// them and record why, the one that finished records its result, and a new
// supervisor picks up all three records: every outcome final, none lost,
// and no job left in the queue.
func TestResumeAfterSupervisorKill(t *testing.T) {
	tc := startCluster(t, "")
	grace := 3 * time.Second
	jobs := []Job{
		shJob(t, "study-3/exp_quick", "sleep 1; echo done > result.txt\n", time.Minute),
		shJob(t, "study-3/exp_long1", "sleep 300\n", 10*time.Minute),
		shJob(t, "study-3/exp_long2", "sleep 300\n", 10*time.Minute),
	}
	child := startSupervisor(t, supervisorInput{Cluster: tc, Grace: grace, Jobs: jobs}, len(jobs))
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	c := newTestCluster(t, tc, func(cfg *Config) { cfg.Grace = grace })
	waitFor(t, 60*time.Second, "the jobs to record their end", func() bool {
		for _, j := range jobs {
			if _, err := c.readRecord(c.folderFor(j.Key)); err != nil {
				return false
			}
		}
		return true
	})
	want := []string{"", Interrupted, Interrupted}
	for i, j := range jobs {
		o, err := c.Run(context.Background(), j)
		if err != nil {
			t.Fatalf("%s: %v", j.Key, err)
		}
		if o.Status != want[i] || (o.Status == Interrupted && !strings.Contains(o.Reason, "heartbeat")) {
			t.Errorf("%s: status %q (%s), want %q", j.Key, o.Status, o.Reason, want[i])
		}
	}
	waitFor(t, 30*time.Second, "an empty queue", func() bool {
		return strings.TrimSpace(tc.client(t, "squeue", "-h", "-o", "%i")) == ""
	})
}

// startSupervisor starts the stand-in supervisor and returns once n jobs
// run their experiments.
func startSupervisor(t *testing.T, in supervisorInput, n int) *exec.Cmd {
	t.Helper()
	self, _ := os.Executable()
	cmd := exec.Command(self, supervisorArg)
	data, _ := json.Marshal(in)
	cmd.Stdin = strings.NewReader(string(data))
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(90 * time.Second)
	for running := map[string]bool{}; len(running) < n; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the supervisor exited before its jobs ran")
			}
			running[l] = true
		case <-deadline:
			t.Fatal("the jobs did not run within 90 s")
		}
	}
	c := newTestCluster(t, in.Cluster, nil)
	waitFor(t, 30*time.Second, "the experiments to start", func() bool {
		for _, j := range in.Jobs {
			if !started(c, j) {
				return false
			}
		}
		return true
	})
	return cmd
}
