package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWorkerStudyRunsRemote: add → prepare → check → a study whose
// experiments run on the worker; the receipts name it, the artifacts are
// hash-identical to a local run of the same experiments, verify exits 0.
// A worker whose host key is not enrolled is refused, naming the file.
func TestWorkerStudyRunsRemote(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	checkHostKeyRefused(t, s)
	root := s.workerRoot(t, "wroot")
	s.addWorker(t, "lo", s.login, root)
	s.prepare(t, "lo")
	r := sjWith(t, s.env(), "", "worker", "check", "lo", "--json")
	var rep struct {
		Ready      bool   `json:"ready"`
		Protocol   string `json:"protocol"`
		UID        int    `json:"uid"`
		Experiment struct {
			Status string `json:"status"`
		} `json:"experiment"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || !rep.Ready || rep.Protocol == "" ||
		rep.Experiment.Status != "succeeded" || rep.UID == 0 {
		t.Fatalf("worker check lo: %v %+v\n%s", err, rep, r)
	}
	remote := newCampaign(t, "cubes")
	if r := sjWith(t, s.env(), "", remote.args(120, 60, "--worker", "lo")...); r.code != 0 {
		t.Fatalf("study on the worker: %s", r)
	}
	snap := status(t, remote.dir)
	if checkReceipts(t, snap, "succeeded"); t.Failed() {
		st := sj(t, "", "status", "--campaign", remote.dir, "--json")
		log, _ := os.ReadFile(filepath.Join(remote.dir, "supervisor", "supervisor.log"))
		t.Logf("status: %s\nsupervisor.log:\n%s", st.stdout, log)
	}
	for _, e := range snap.Experiments {
		if e.Machine != "lo" || e.Remote == nil || e.Remote.Host != "127.0.0.1" || !strings.HasPrefix(e.Remote.Job, "job_") || e.Remote.Node == "" {
			t.Errorf("receipt %s: machine %q, remote %+v; want lo on 127.0.0.1 with a job", e.ID, e.Machine, e.Remote)
		}
	}
	if r := sj(t, "", "verify", "--campaign", remote.dir); r.code != 0 {
		t.Fatalf("verify of the remote study: %s", r)
	}
	checkWorkerCleaned(t, root, len(snap.Experiments))
	local := newCampaign(t, "cubes")
	if r := sj(t, "", local.args(120, 60)...); r.code != 0 {
		t.Fatalf("the same study on this host: %s", r)
	}
	compareArtifacts(t, status(t, local.dir), snap)
	checkIdentityFrozen(t, s, remote)
}

// checkIdentityFrozen: a study whose worker changed its identity (here its
// port) is refused on resume, naming the worker.
func checkIdentityFrozen(t *testing.T, s *sshd, c campaign) {
	t.Helper()
	file := filepath.Join(s.config, "workers", "lo.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(b), fmt.Sprintf(`"port": %d`, s.port), fmt.Sprintf(`"port": %d`, s.port+1), 1)
	if err := os.WriteFile(file, []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	r := sjWith(t, s.env(), "", "study", "--campaign", c.dir, "--batch")
	if r.code != 2 || !strings.Contains(r.stderr, "worker lo") || !strings.Contains(r.stderr, "identity") {
		t.Errorf("resume with a changed worker identity: want exit 2 naming worker lo, got %s", r)
	}
}

// checkHostKeyRefused: a worker whose known-hosts file lacks the host key.
func checkHostKeyRefused(t *testing.T, s *sshd) {
	t.Helper()
	empty := filepath.Join(s.dir, "empty_known_hosts")
	writeFile(t, empty, "")
	r := sjWith(t, s.env(), "", "worker", "add", "stranger", "--host", "127.0.0.1", "--port", fmt.Sprint(s.port),
		"--user", s.login, "--identity-file", s.key, "--known-hosts", empty, "--root", filepath.Join(s.dir, "x"))
	if r.code != 0 {
		t.Fatalf("worker add stranger: %s", r)
	}
	r = sjWith(t, s.env(), "", "worker", "check", "stranger")
	if r.code != 1 || !strings.Contains(r.stdout, "host key") || !strings.Contains(r.stdout, empty) {
		t.Errorf("worker check with an unknown host key: want exit 1 naming the host key and %s, got %s", empty, r)
	}
}

// compareArtifacts wants each local experiment's artifacts, by its
// arguments, hash-identical in the remote study.
func compareArtifacts(t *testing.T, local, remote snapshot) {
	t.Helper()
	byArgs := map[string]receipt{}
	for _, e := range remote.Experiments {
		byArgs[strings.Join(e.Args, " ")] = e
	}
	for _, l := range local.Experiments {
		r, ok := byArgs[strings.Join(l.Args, " ")]
		if !ok || len(l.Artifacts) == 0 {
			t.Errorf("local experiment %v has no remote twin (or no artifacts)", l.Args)
			continue
		}
		for name, a := range l.Artifacts {
			if r.Artifacts[name] != a {
				t.Errorf("%v: artifact %s local %+v, remote %+v", l.Args, name, a, r.Artifacts[name])
			}
		}
	}
}

// TestWorkerRootLoginDropsToRunAs: a root login without --run-as is
// refused (by prepare, and by the worker's serve itself); with --run-as the
// experiment's processes run as that account, as /proc shows.
func TestWorkerRootLoginDropsToRunAs(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	root := filepath.Join(s.dir, "rroot")
	account := "sjr" + randomHex(t)[:8]
	t.Cleanup(func() { // after reapMarker's cleanup stopped the worker's daemon
		if exec.Command("id", account).Run() == nil { // prepare made it
			accountCmd(t, "userdel", account)
		}
	})
	reapMarker(t, root)
	s.addWorker(t, "rootless", "root", root)
	if r := sjWith(t, s.env(), "", "worker", "prepare", "rootless"); r.code != 2 || !strings.Contains(r.stderr, "run-as") {
		t.Errorf("prepare of a root login without --run-as: want exit 2 naming run-as, got %s", r)
	}
	s.addWorker(t, "rw", "root", root, "--run-as", account)
	s.prepare(t, "rw")
	checkServeRefusesRoot(t, s, root)
	u, err := user.Lookup(account)
	if err != nil {
		t.Fatalf("prepare did not create the run-as account: %v", err)
	}
	checkCapabilityShippedAs(t, s, "rw", root, u.Uid)
	c := newCampaign(t, "busy", "e2e-seconds: 20")
	reapMarker(t, c.marker)
	b := startEnv(t, s.env(), c.args(300, 120, "--worker", "rw")...)
	waitFor(t, 30*time.Second, "the experiment to run on the worker", func() bool { return len(procsWith(c.marker)) > 0 })
	for _, pid := range procsWith(c.marker) {
		if uid := procUID(pid); uid != u.Uid {
			t.Errorf("experiment process %d runs as uid %s, want %s (%s)%s", pid, uid, u.Uid, account, describe([]int{pid}))
		}
	}
	stopStudy(t, s, c, b)
}

// checkServeRefusesRoot starts the shipped binary's serve as root without
// --run-as, as a hand-made ssh command would: it refuses.
func checkServeRefusesRoot(t *testing.T, s *sshd, root string) {
	t.Helper()
	bins, _ := filepath.Glob(filepath.Join(root, "bin", "simjecture-*"))
	if len(bins) != 1 {
		t.Fatalf("prepare shipped %v, want one binary", bins)
	}
	out, _ := exec.Command("ssh", "-p", fmt.Sprint(s.port), "-i", s.key, "-o", "BatchMode=yes",
		"-o", "UserKnownHostsFile="+s.knownHosts, "root@127.0.0.1", bins[0], "worker", "serve", "--root", root).CombinedOutput()
	if !strings.Contains(string(out), "never run as root") {
		t.Errorf("serve as root without --run-as: want a refusal, got %q", out)
	}
}

func procUID(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			return f[1]
		}
	}
	return ""
}

// stopStudy cancels the study and wants no experiment process left.
func stopStudy(t *testing.T, s *sshd, c campaign, b *bg) {
	t.Helper()
	if r := sjWith(t, s.env(), "", "cancel", "--campaign", c.dir); r.code != 0 {
		t.Fatalf("cancel: %s", r)
	}
	b.wait(t, 60*time.Second)
	waitFor(t, 10*time.Second, "no experiment process left", func() bool { return len(procsWith(c.marker)) == 0 })
}

// sshClients are this host's ssh processes of a worker root (the session
// and its ControlMaster).
func sshClients(root string) []int {
	var out []int
	for _, pid := range procsWith(root) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); filepath.Base(exe) == "ssh" {
			out = append(out, pid)
		}
	}
	return out
}

// TestWorkerSurvivesDroppedConnection: killing the ssh processes in the
// middle of a 20 s experiment does not fail it: the session is re-opened,
// the experiment re-attached, and its receipt ends succeeded.
func TestWorkerSurvivesDroppedConnection(t *testing.T) {
	t.Parallel()
	w := startWorkerStudy(t, "busy", 20, nil, "lo")
	s, root, c, b := w.s, w.root, w.c, w.b
	clients := sshClients(root)
	if len(clients) == 0 {
		t.Fatal("no ssh process of the worker session found")
	}
	for _, pid := range clients {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	waitFor(t, 60*time.Second, "the first experiment to finish", func() bool {
		e, ok := firstByKey(status(t, c.dir), "run-0")
		return ok && e.Status != "running" && e.Status != "queued"
	})
	if e, _ := firstByKey(status(t, c.dir), "run-0"); e.Status != "succeeded" || e.Machine != "lo" {
		t.Errorf("the experiment whose connection dropped ended %s on %q (%s), want succeeded on lo", e.Status, e.Machine, e.Error)
	}
	stopStudy(t, s, c, b)
}

func firstByKey(snap snapshot, key string) (receipt, bool) {
	for _, e := range snap.Experiments {
		if e.Key == key {
			return e, true
		}
	}
	return receipt{}, false
}

// TestWorkerLostGivesInterrupted: stopping the worker's sshd and its
// serving processes mid-run records the experiment interrupted with the
// reason, and the study goes on (its replicate runs on this host).
func TestWorkerLostGivesInterrupted(t *testing.T) {
	t.Parallel()
	w := startWorkerStudy(t, "kill", 60, []string{"SIMJECTURE_WORKER_ORPHAN_GRACE=4"}, "lo", "local")
	s, root, c, b := w.s, w.root, w.c, w.b
	s.stop()
	for _, pid := range procsWith(filepath.Join(root, "bin")) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); filepath.Base(exe) != "ssh" {
			_ = syscall.Kill(pid, syscall.SIGKILL) // the worker's serve and daemon
		}
	}
	r := b.wait(t, 90*time.Second)
	snap := status(t, c.dir)
	first, _ := firstByKey(snap, "first")
	retry, _ := firstByKey(snap, "retry-1")
	if r.code != 0 || snap.Status != "completed" || first.Status != "interrupted" || !strings.Contains(first.Error, "unreachable") ||
		retry.Status != "succeeded" || retry.Machine != "local" {
		t.Errorf("want completed, the lost run interrupted with its reason and the replicate succeeded locally; got %s, first %+v, retry %+v\n%s",
			snap.Status, first, retry, r)
	}
}

// TestWorkerDaemonStopsOnSIGTERM: SIGTERM to the worker's daemon (an
// administrator stopping it) stops the experiment it runs at once: the
// daemon exits, no process of the experiment is left, and the receipt is
// interrupted with the daemon's reason; the study goes on (its replicate
// runs on this host).
func TestWorkerDaemonStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	w := startWorkerStudy(t, "kill", 60, nil, "lo", "local")
	c, b := w.c, w.b
	daemons := workerDaemons(w.root)
	if len(daemons) != 1 {
		t.Fatalf("%d worker daemons run, want 1", len(daemons))
	}
	if err := syscall.Kill(daemons[0], syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the daemon to exit and its experiment to stop", func() bool {
		return !alive(daemons[0]) && len(procsWith(c.marker)) == 0
	})
	r := b.wait(t, 90*time.Second)
	snap := status(t, c.dir)
	first, _ := firstByKey(snap, "first")
	retry, _ := firstByKey(snap, "retry-1")
	if r.code != 0 || snap.Status != "completed" || first.Status != "interrupted" || !strings.Contains(first.Error, "SIGTERM") ||
		retry.Status != "succeeded" {
		t.Errorf("want completed, the stopped run interrupted with the daemon's reason and the replicate succeeded; got %s, first %+v, retry %+v\n%s",
			snap.Status, first, retry, r)
	}
}

// workerDaemons are the pids of the worker daemons of root.
func workerDaemons(root string) []int {
	var pids []int
	for _, pid := range procsWith(filepath.Join(root, "bin")) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if bytes.Contains(cmdline, []byte("daemon\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestWorkerStopsOrphans: after kill -9 of the supervisor, the worker
// stops the orphaned experiment after its grace; resume records it
// interrupted, with the reason.
func TestWorkerStopsOrphans(t *testing.T) {
	t.Parallel()
	w := startWorkerStudy(t, "busy", 120, []string{"SIMJECTURE_WORKER_ORPHAN_GRACE=3"}, "lo")
	s, c, b := w.s, w.c, w.b
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	b.wait(t, 10*time.Second)
	waitFor(t, 30*time.Second, "the worker to stop the orphaned experiment", func() bool { return len(procsWith(c.marker)) == 0 })
	resumed := startEnv(t, s.env(), "resume", "--campaign", c.dir, "--batch")
	waitFor(t, 30*time.Second, "resume to record the orphan", func() bool {
		e, ok := firstByKey(status(t, c.dir), "run-0")
		return ok && e.Status == "interrupted"
	})
	if e, _ := firstByKey(status(t, c.dir), "run-0"); !strings.Contains(e.Error, "orphaned") {
		t.Errorf("the orphan's receipt says %q, want the worker's reason", e.Error)
	}
	stopStudy(t, s, c, resumed)
}

// TestWorkerResumeReattaches: after kill -9 of the supervisor, a resume
// within the worker's grace re-attaches to the experiment still running
// there, which ends succeeded.
func TestWorkerResumeReattaches(t *testing.T) {
	t.Parallel()
	w := startWorkerStudy(t, "busy", 8, nil, "lo")
	s, c, b := w.s, w.c, w.b
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	b.wait(t, 10*time.Second)
	resumeReattaches(t, s, c)
}

// resumeReattaches resumes the study of c, checks that its experiment
// left running on the worker ends succeeded there, and stops the study.
func resumeReattaches(t *testing.T, s *sshd, c campaign) {
	t.Helper()
	resumed := startEnv(t, s.env(), "resume", "--campaign", c.dir, "--batch")
	waitFor(t, 60*time.Second, "the re-attached experiment to finish", func() bool {
		e, ok := firstByKey(status(t, c.dir), "run-0")
		return ok && e.Status != "running"
	})
	if e, _ := firstByKey(status(t, c.dir), "run-0"); e.Status != "succeeded" || e.Machine != "lo" {
		t.Errorf("the experiment left running on the worker ended %s on %q (%s), want succeeded on lo", e.Status, e.Machine, e.Error)
	}
	stopStudy(t, s, c, resumed)
}

// workerRun is a study with a sleeper running on the worker lo of its own sshd.
type workerRun struct {
	s    *sshd
	root string
	c    campaign
	b    *bg
}

// startWorkerStudy starts an sshd, adds and prepares the worker lo (addEnv
// in worker add's environment), starts a study in mode whose sleepers run
// seconds with the pool given, and waits for its sleeper on the worker.
func startWorkerStudy(t *testing.T, mode string, seconds int, addEnv []string, pool ...string) workerRun {
	t.Helper()
	s := startSSHD(t)
	root := s.workerRoot(t, "wroot")
	s.addEnv = addEnv
	s.addWorker(t, "lo", s.login, root)
	s.prepare(t, "lo")
	c := newCampaign(t, mode, fmt.Sprintf("e2e-seconds: %d", seconds))
	reapMarker(t, c.marker)
	args := []string{}
	for _, w := range pool {
		args = append(args, "--worker", w)
	}
	b := startEnv(t, s.env(), c.args(300, 120, args...)...)
	waitFor(t, 30*time.Second, "the experiment to run on the worker", func() bool { return len(procsWith(c.marker)) > 0 })
	return workerRun{s: s, root: root, c: c, b: b}
}
