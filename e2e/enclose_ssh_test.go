package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkerCannotRedirectTheSSHClient: the study's experiments run on an
// ssh worker, which the supervisor reaches with its own ssh client outside
// every enclosure; an enclosed worker (testdata/sshforger.py) keeps its
// home, /tmp and the settings folder there, so it tries to take that
// client over: a ProxyCommand in ~/.ssh/config (it would run a command of
// ours as the supervisor), the profile's known-hosts and identity files
// (in /tmp, as the test's sshd keeps them), the worker's profile, and the
// folder of the master's control sockets, whose masters would run its
// commands on the worker as the supervisor. Every write, rename and move
// is refused, the control folder and the identity file are hidden (empty),
// no ProxyCommand ran, its home stays writable, and the experiment it asks
// for afterwards runs on the worker as before.
func TestWorkerCannotRedirectTheSSHClient(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here:\n%s", r)
	}
	s := startSSHD(t)
	root := s.workerRoot(t, "wroot")
	s.addWorker(t, "lo", s.login, root)
	s.prepare(t, "lo")
	home := t.TempDir() // the supervisor's and the agent's home, with its ~/.ssh
	must(t, os.Mkdir(filepath.Join(home, ".ssh"), 0o700))
	sshConfig := filepath.Join(home, ".ssh", "config")
	writeFile(t, sshConfig, "# the operator's\n")
	marker := filepath.Join(t.TempDir(), "proxycommand-ran")
	st := newAdversaryStudy(t, "sshforger.py")
	control := fmt.Sprintf("%s/simjecture-ssh-%d", os.TempDir(), os.Geteuid())
	targets, _ := json.Marshal(map[string]string{"ssh_config": sshConfig, "known_hosts": s.knownHosts, "identity": s.key,
		"profile": filepath.Join(s.config, "workers", "lo.json"), "control": control, "marker": marker})
	writeFile(t, filepath.Join(filepath.Dir(st.exe), "targets.json"), string(targets))
	before := map[string][]byte{}
	for _, p := range []string{sshConfig, s.knownHosts, s.key, filepath.Join(s.config, "workers", "lo.json")} {
		before[p], _ = os.ReadFile(p)
	}
	if r := sjWith(t, s.env("HOME="+home), "", append(st.args(90), "--worker", "lo")...); r.code != 0 {
		t.Fatalf("study: want exit 0 (the worker pauses in turn 2), got %s", r)
	}
	var got map[string]string
	a, err := os.ReadFile(filepath.Join(filepath.Dir(st.exe), "attempts.json"))
	if err != nil || json.Unmarshal(a, &got) != nil {
		t.Fatalf("the worker left no attempts.json (%v): %s", err, a)
	}
	t.Logf("attempts: %s", a)
	for _, k := range []string{"ssh_config_write", "ssh_config_rename", "known_hosts_write", "known_hosts_rename",
		"identity_write", "identity_rename", "profile_write", "profile_rename", "control_file", "control_move"} {
		if got[k] == "written" || got[k] == "" {
			t.Errorf("%s: got %q, want the write refused", k, got[k])
		}
	}
	if got["control_visible"] != "0" {
		t.Errorf("the worker sees %s entries in the control folder (the supervisor's master sockets), want 0", got["control_visible"])
	}
	if got["home"] != "written" {
		t.Errorf("home: got %q, want the worker's home writable", got["home"])
	}
	if got["experiment"] != "succeeded" {
		t.Errorf("the experiment after the attempts: %q, want succeeded on the worker", got["experiment"])
	}
	for p, want := range before {
		if now, _ := os.ReadFile(p); string(now) != string(want) {
			t.Errorf("%s was rewritten by the worker", p)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a ProxyCommand of the worker's ran as the supervisor")
	}
	snap := status(t, st.dir)
	for _, e := range snap.Experiments {
		if e.Machine != "lo" || e.Remote == nil || !strings.HasPrefix(e.Remote.Job, "job_") {
			t.Errorf("receipt %s ran on %q (%+v), want the worker lo", e.ID, e.Machine, e.Remote)
		}
	}
	if r := sj(t, "", "verify", "--campaign", st.dir); r.code != 0 {
		t.Errorf("verify: want exit 0, got %s", r)
	}
}
