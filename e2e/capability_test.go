package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// capReceipt is the part of a receipt this test reads.
type capReceipt struct {
	ID               string   `json:"id"`
	Status           string   `json:"status"`
	Capability       string   `json:"capability"`
	CapabilitySHA256 string   `json:"capability_sha256"`
	Args             []string `json:"args"`
	ArtifactDir      string   `json:"artifact_dir"`
	Error            string   `json:"error"`
	IsolationBackend string   `json:"isolation_backend"`
	Machine          string   `json:"machine"`
	Remote           *struct {
		Host string `json:"host"`
	} `json:"remote"`
}

// trapzCapability makes the capabilities folder of testdata/capability/trapz
// (its runtime copied under tmp), the capability agent, and the study's
// hypothesis and instructions files h.txt and i.txt in tmp.
func trapzCapability(t *testing.T, tmp string) (capDir, runtime, agentPath string) {
	t.Helper()
	runtime = filepath.Join(tmp, "runtime", "trapz")
	copyTree(t, filepath.Join("testdata", "capability", "trapz"), runtime)
	capDir = filepath.Join(tmp, "capabilities")
	manifest := map[string]any{
		"runtime": runtime, "executable": "bin/trapz",
		"environment": map[string]string{"TRAPZ_HOME": "/opt/simjecture-capabilities/trapz"},
		"description": "trapezoid rule for the integral of x^2 over [0, 1]",
	}
	body, _ := json.Marshal(manifest)
	if err := os.MkdirAll(capDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(capDir, "trapz.json"), string(body))
	agentPath = filepath.Join(tmp, "agent.sh")
	copyExec(t, filepath.Join("testdata", "capability_agent.sh"), agentPath)
	writeFile(t, filepath.Join(tmp, "h.txt"), "The trapezoid rule on x^2 converges at second order.\n")
	writeFile(t, filepath.Join(tmp, "i.txt"), "Run the trapz capability.\n")
	return capDir, runtime, agentPath
}

// TestCapability runs a small real capability (testdata/capability/trapz: a
// trapezoid-rule integrator whose runtime is shown read-only at
// /opt/simjecture-capabilities/trapz, with an environment variable naming
// that virtual path) through `lab run {"capability": …}` under Bubblewrap,
// checks its result, then changes one byte of the runtime and sees the next
// capability experiment refuse to run.
func TestCapability(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	capDir, runtime, agentPath := trapzCapability(t, tmp)
	dir := filepath.Join(tmp, "study")

	bad := sj(t, "", "study", "--campaign", filepath.Join(tmp, "bad"), "--hypothesis-file", filepath.Join(tmp, "h.txt"),
		"--instructions-file", filepath.Join(tmp, "i.txt"), "--backend", "command", "--executable", agentPath,
		"--capabilities", filepath.Join(tmp, "nowhere"), "--batch")
	if bad.code != 2 || len(lines(bad.stderr)) != 1 {
		t.Fatalf("a missing capabilities folder must be refused with exit 2:\n%s", bad)
	}

	sup, first := startTrapzStudy(t, nil, dir, capDir, agentPath)
	if first.IsolationBackend != "bubblewrap" || first.CapabilitySHA256 == "" {
		t.Fatalf("capability receipt %+v", first)
	}

	// One changed byte in the runtime: the next capability run refuses.
	script := filepath.Join(runtime, "bin", "trapz")
	b, _ := os.ReadFile(script)
	if err := os.WriteFile(script, append(b, '\n'), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "research", "plan.txt"), "1000\n2000\n")
	second := waitCapability(t, dir, "2000", "failed")
	if !strings.Contains(second.Error, "changed since the study was created") {
		t.Fatalf("a changed runtime must refuse to run: %+v", second)
	}
	r := sj(t, `{"capability":"nope","outputs":["x"]}`, "lab", "run", "--campaign", dir)
	if r.code != 1 || !strings.Contains(r.stdout, "not one of this study's") {
		t.Fatalf("unknown capability:\n%s", r)
	}
	if c := sj(t, "", "cancel", "--campaign", dir); c.code != 0 {
		t.Fatalf("cancel:\n%s", c)
	}
	if res := sup.wait(t, 10*time.Second); res.code != 0 {
		t.Fatalf("supervisor:\n%s", res)
	}
}

// startTrapzStudy starts a study in dir whose agent runs trapz 1000 (with
// extra study flags and envv in its environment), waits for that
// experiment to succeed and checks its estimate.
func startTrapzStudy(t *testing.T, envv []string, dir, capDir, agentPath string, extra ...string) (*bg, capReceipt) {
	t.Helper()
	tmp := filepath.Dir(agentPath)
	args := append([]string{"study", "--campaign", dir, "--hypothesis-file", filepath.Join(tmp, "h.txt"),
		"--instructions-file", filepath.Join(tmp, "i.txt"), "--backend", "command", "--executable", agentPath,
		"--execution-backend", "bubblewrap", "--capabilities", capDir, "--wall-seconds", "120", "--turn-seconds", "30", "--batch"}, extra...)
	sup := startEnv(t, envv, args...)
	waitFor(t, 10*time.Second, "the study's research folder", func() bool {
		_, err := os.Stat(filepath.Join(dir, "research"))
		return err == nil
	})
	writeFile(t, filepath.Join(dir, "research", "plan.txt"), "1000\n")
	r := waitCapability(t, dir, "1000", "succeeded")
	out, err := os.ReadFile(filepath.Join(r.ArtifactDir, "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 3 {
		t.Fatalf("trapz output %q", out)
	}
	if est, _ := strconv.ParseFloat(fields[1], 64); est < 0.3333 || est > 0.3334 {
		t.Fatalf("trapz estimate %q, receipt %+v", out, r)
	}
	return sup, r
}

func waitCapability(t *testing.T, dir, n, want string) capReceipt {
	t.Helper()
	var found capReceipt
	waitFor(t, 30*time.Second, fmt.Sprintf("the trapz %s experiment to be %s", n, want), func() bool {
		r := sj(t, "", "status", "--campaign", dir, "--json")
		var snap struct{ Experiments []capReceipt }
		if json.Unmarshal([]byte(r.stdout), &snap) != nil {
			return false
		}
		for _, e := range snap.Experiments {
			if e.Capability == "trapz" && len(e.Args) > 0 && e.Args[0] == n {
				found = e
				return e.Status == want
			}
		}
		return false
	})
	return found
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}
