package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnprotectedRecordIsSaid: where Bubblewrap fails its probe (a host
// without user namespaces, simulated with SIMJECTURE_BWRAP pointing at a
// bwrap that fails as such a host's does), the study still runs — here as
// uid 65534 under process-cooperative — and status --json, report.json and
// doctor all say that the record is not protected from the agent.
func TestUnprotectedRecordIsSaid(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to drop to uid 65534 with setpriv")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	tmp := nobodyDir(t)
	exe, agentPath := filepath.Join(tmp, "simjecture"), filepath.Join(tmp, "agent.py")
	copyExec(t, bin, exe)
	copyExec(t, agent, agentPath)
	fakeBwrap := filepath.Join(tmp, "bwrap")
	writeFile(t, fakeBwrap, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
	if err := os.Chmod(fakeBwrap, 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCampaign(t, "selfpause")
	for _, p := range []string{c.hypothesis, c.instructions} {
		copyExec(t, p, filepath.Join(tmp, filepath.Base(p)))
	}
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(work, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "study")
	asNobody := func(args ...string) ([]byte, error) {
		argv := append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--",
			"env", "HOME=" + work, "SIMJECTURE_BWRAP=" + fakeBwrap, exe}, args...)
		return exec.Command("setpriv", argv...).CombinedOutput()
	}
	out, err := asNobody("study", "--campaign", dir, "--hypothesis-file", filepath.Join(tmp, "hypothesis.txt"),
		"--instructions-file", filepath.Join(tmp, "instructions.txt"), "--backend", "command", "--executable", agentPath,
		"--execution-backend", "process-cooperative", "--wall-seconds", "120", "--turn-seconds", "60", "--batch")
	if err != nil {
		t.Fatalf("study as uid 65534 with a failing bwrap: %v\n%s", err, out)
	}
	out, err = asNobody("status", "--campaign", dir, "--json")
	var snap struct {
		Status           string `json:"status"`
		RecordProtection string `json:"record_protection"`
	}
	if err != nil || json.Unmarshal(out, &snap) != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	const none = "not protected from the agent"
	if snap.Status != "paused" || snap.RecordProtection != none {
		t.Errorf("status %q, record_protection %q; want paused, %q", snap.Status, snap.RecordProtection, none)
	}
	if rep, _ := os.ReadFile(filepath.Join(dir, "report.json")); !strings.Contains(string(rep), `"record_protection": "`+none+`"`) {
		t.Errorf("report.json does not say %q", none)
	}
	out, _ = asNobody("doctor", "--json")
	if !strings.Contains(string(out), `"record_protection": "`+none+`"`) {
		t.Errorf("doctor --json does not say %q:\n%s", none, out)
	}
}
