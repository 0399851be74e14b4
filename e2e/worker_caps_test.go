package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWorkerCapabilityShipped: `worker prepare --capabilities` ships the
// trapz capability to an SSH worker (and says it leaves out one with
// read-only mounts of host folders); a re-prepare copies nothing; a study
// whose experiment uses trapz runs it on the worker (the receipt names it,
// the estimate is right). Then the runtime is changed on the worker: its
// daemon no longer reports it (its log says why) and the next study runs
// the capability on this host.
func TestWorkerCapabilityShipped(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	root := s.workerRoot(t, "wroot")
	s.addWorker(t, "lo", s.login, root)
	tmp := t.TempDir()
	capDir, _, agentPath := trapzCapability(t, tmp)
	mounts, _ := json.Marshal(map[string]any{"runtime": filepath.Join(tmp, "runtime", "trapz"), "executable": "bin/trapz",
		"read_only_mounts": []map[string]string{{"host": "/usr/share", "path": "/data"}}})
	writeFile(t, filepath.Join(capDir, "withmount.json"), string(mounts))

	first := sjWith(t, s.env(), "", "worker", "prepare", "lo", "--capabilities", capDir)
	if first.code != 0 || !strings.Contains(first.stderr, "shipped capability trapz: 2 of 2 files") ||
		!strings.Contains(first.stderr, "capability withmount not shipped") {
		t.Fatalf("worker prepare --capabilities:\n%s", first)
	}
	again := sjWith(t, s.env(), "", "worker", "prepare", "lo", "--capabilities", capDir)
	if again.code != 0 || !strings.Contains(again.stderr, "capability trapz already on the worker: nothing copied") ||
		strings.Contains(again.stderr, "shipped capability") {
		t.Fatalf("a re-prepare of an unchanged capability must copy nothing:\n%s", again)
	}
	bad := sjWith(t, s.env(), "", "worker", "prepare", "lo", "--capabilities", filepath.Join(tmp, "nowhere"))
	if bad.code != 2 || len(lines(bad.stderr)) != 1 || !strings.Contains(bad.stderr, "--capabilities") {
		t.Fatalf("a missing capabilities folder must be one line, exit 2:\n%s", bad)
	}
	empty := filepath.Join(tmp, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{empty, filepath.Join(tmp, "runtime", "trapz")} {
		r := sjWith(t, s.env(), "", "worker", "prepare", "lo", "--capabilities", dir)
		if r.code != 2 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, dir+" holds no capability manifests (<name>.json): nothing sent") {
			t.Fatalf("--capabilities %s (no manifests) must be one line naming it, exit 2:\n%s", dir, r)
		}
	}

	remote := capStudy(t, s, capDir, agentPath, "remote")
	if remote.Machine != "lo" || remote.Remote == nil || remote.Remote.Host != "127.0.0.1" {
		t.Fatalf("the capability experiment ran on %q (%+v), want the worker lo", remote.Machine, remote.Remote)
	}

	tool := shippedTool(t, root)
	body, err := os.ReadFile(tool)
	if err != nil {
		t.Fatalf("the shipped runtime is not under ROOT/capabilities: %v", err)
	}
	if err := os.WriteFile(tool, append(body, '\n'), 0o755); err != nil {
		t.Fatal(err)
	}
	local := capStudy(t, s, capDir, agentPath, "tampered")
	if local.Machine != "local" {
		t.Fatalf("with the worker's runtime changed the experiment ran on %q, want local", local.Machine)
	}
	log, _ := os.ReadFile(filepath.Join(root, "state", "run", "daemon.log"))
	if !strings.Contains(string(log), "capability not reported") || !strings.Contains(string(log), "changed on the worker") {
		t.Errorf("the daemon's log does not say why trapz is not reported:\n%s", log)
	}
}

// capStudy runs a study on the pool lo, local whose agent runs trapz 1000,
// checks its estimate, cancels it and returns the receipt.
func capStudy(t *testing.T, s *sshd, capDir, agentPath, name string) capReceipt {
	t.Helper()
	dir := filepath.Join(filepath.Dir(agentPath), name)
	sup, r := startTrapzStudy(t, s.env(), dir, capDir, agentPath, "--worker", "lo", "--worker", "local")
	if c := sj(t, "", "cancel", "--campaign", dir); c.code != 0 {
		t.Fatalf("cancel:\n%s", c)
	}
	if res := sup.wait(t, 20*time.Second); res.code != 0 {
		t.Fatalf("supervisor:\n%s", res)
	}
	return r
}

// checkCapabilityShippedAs: for a root login, prepare gives the run-as
// account ROOT/capabilities, and its daemon installs trapz there as uid.
func checkCapabilityShippedAs(t *testing.T, s *sshd, id, root, uid string) {
	t.Helper()
	capDir, _, _ := trapzCapability(t, t.TempDir())
	r := sjWith(t, s.env(), "", "worker", "prepare", id, "--capabilities", capDir)
	if r.code != 0 || !strings.Contains(r.stderr, "shipped capability trapz") {
		t.Fatalf("worker prepare %s --capabilities:\n%s", id, r)
	}
	tool := shippedTool(t, root)
	info, err := os.Stat(tool)
	if err != nil || fmt.Sprint(info.Sys().(*syscall.Stat_t).Uid) != uid || info.Mode().Perm()&0o100 == 0 {
		t.Errorf("shipped %s: %v %v; want an executable of uid %s", tool, info, err, uid)
	}
}

// TestPrepareCapabilitiesRefusedForSlurm: `worker prepare --capabilities`
// with a Slurm worker is exit 2, one line, before anything is sent (there
// is no cluster here: shipping the binary would fail otherwise).
func TestPrepareCapabilitiesRefusedForSlurm(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	capDir, _, _ := trapzCapability(t, tmp)
	envv := scratchEnv(tmp)
	if r := sjWith(t, envv, "", "worker", "add", "hpc", "--slurm", "--root", filepath.Join(tmp, "shared")); r.code != 0 {
		t.Fatalf("worker add --slurm: %s", r)
	}
	r := sjWith(t, envv, "", "worker", "prepare", "hpc", "--capabilities", capDir)
	checkInvalid(t, r, "capabilities are not shipped to Slurm workers")
	if _, err := os.Stat(filepath.Join(tmp, "shared", "bin")); err == nil {
		t.Errorf("a refused prepare shipped the binary to %s", filepath.Join(tmp, "shared", "bin"))
	}
}

// shippedTool is the worker's one shipped copy of trapz's tool,
// ROOT/capabilities/trapz/runtime-HASH/bin/trapz.
func shippedTool(t *testing.T, root string) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(root, "capabilities", "trapz", "runtime-*", "bin", "trapz"))
	if len(found) != 1 {
		t.Fatalf("want one shipped runtime of trapz under ROOT/capabilities/trapz, found %v", found)
	}
	return found[0]
}
