package slurm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// The test binary is also the binary the jobs run (shipped like ours): it
// dispatches the node's job mode and the sandbox runner first.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case sandbox.HelperArg:
			os.Exit(sandbox.HelperMain(os.Args[2:]))
		case JobArg:
			os.Exit(JobMain(os.Args[2:]))
		case supervisorArg:
			os.Exit(supervisorMain(os.Args[2:]))
		}
	}
	code := m.Run()
	sandbox.CloseRunners()
	if fixtureBin != "" {
		_ = os.RemoveAll(filepath.Dir(fixtureBin))
	}
	os.Exit(code)
}

// testCluster is a running slurmfix cluster (e2e/slurmfix), started through
// its slurmcluster program: this package may not import e2e.
type testCluster struct {
	Conf      string `json:"conf"`
	Shared    string `json:"shared"`
	Node      string `json:"node"`
	Partition string `json:"partition"`
}

var (
	fixtureOnce sync.Once
	fixtureBin  string
	fixtureErr  error
)

// startCluster builds (once) and starts the test cluster for t; it skips
// t, saying why, when Slurm is not installed here or the test is not root.
func startCluster(t testing.TB, options string) testCluster {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "slurmcluster-")
		if err != nil {
			fixtureErr = err
			return
		}
		fixtureBin = filepath.Join(dir, "slurmcluster")
		out, err := exec.Command("go", "build", "-o", fixtureBin, "github.com/simjecture/simjecture/e2e/slurmfix/slurmcluster").CombinedOutput()
		if err != nil {
			fixtureErr = errors.New(string(out))
		}
	})
	if fixtureErr != nil {
		t.Fatalf("build slurmcluster: %v", fixtureErr)
	}
	cmd := exec.Command(fixtureBin)
	cmd.Env = append(os.Environ(), "SLURMFIX_OPTIONS="+options)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var c testCluster
	if err := json.NewDecoder(bufio.NewReader(stdout)).Decode(&c); err != nil {
		_ = cmd.Wait()
		if cmd.ProcessState.ExitCode() == 3 {
			t.Skip(strings.TrimSpace(stderr.String()))
		}
		t.Fatalf("slurmcluster: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("slurmcluster stop: %v\n%s", err, stderr.String())
		}
	})
	return c
}

func (tc testCluster) env() []string { return append(os.Environ(), "SLURM_CONF="+tc.Conf) }

// client runs a Slurm client against tc.
func (tc testCluster) client(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := Local{Env: tc.env()}.Output(context.Background(), name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newTestCluster is a Cluster on tc with the test binary as the shipped one.
func newTestCluster(t testing.TB, tc testCluster, mod func(*Config)) *Cluster {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Worker: "hpc", Partition: tc.Partition, Root: filepath.Join(tc.Shared, "root"),
		Backend: sandbox.Bubblewrap, Self: self, Exec: Local{Env: tc.env()}, RecordLag: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// shJob is an experiment running script under sh, writing result.txt.
func shJob(t testing.TB, key, script string, timeout time.Duration) Job {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(src, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, _, err := sandbox.HashFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return Job{Key: key, Spec: sandbox.Spec{
		Backend: sandbox.Bubblewrap, ArtifactDir: filepath.Join(dir, "artifacts"),
		Sealed:  []sandbox.SealedFile{{Rel: "run.sh", HostPath: src, SHA256: sum}},
		Command: []string{"sh", "/work/run.sh"}, Outputs: []string{"result.txt"},
		Timeout: timeout, CPUs: 1, MemoryBytes: 256 << 20, MaxFileBytes: 16 << 20, WorkspaceBytes: 64 << 20,
	}}
}

// waitFor polls cond every 50 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
