package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEnumFlagsNamed gives every enum-valued flag of every command a value
// its table does not hold: each must exit 2 with one stderr line that names
// the flag and the value, before anything probes the host (the default
// agent backend, codex, is not installed here), and write nothing: no
// campaign, output or worker profile under the scratch folder.
func TestEnumFlagsNamed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args func(tmp string, c campaign) []string
		want []string // substrings of the error line
	}{
		{"study --backend", func(_ string, c campaign) []string {
			return studyArgs(c, "--backend=weird")
		}, []string{"--backend: ", `"weird"`, "choose one of"}},
		{"study --execution-backend, agent backend left at codex", func(_ string, c campaign) []string {
			return studyArgs(c, "--execution-backend", "weird")
		}, []string{"--execution-backend: ", `"weird"`}},
		{"study --execution-backend with the command backend", func(_ string, c campaign) []string {
			return studyArgs(c, "--backend", "command", "--executable", "/no/such/agent", "--execution-backend", "weird")
		}, []string{"--execution-backend: ", `"weird"`}},
		{"study --mode", func(_ string, c campaign) []string {
			return studyArgs(c, "--mode", "weird", "--execution-backend", "weird2")
		}, []string{"--mode: ", `"weird"`}},
		{"study --completion-policy", func(_ string, c campaign) []string {
			return studyArgs(c, "--completion-policy", "weird")
		}, []string{"--completion-policy: ", `"weird"`}},
		{"demo --mode", func(tmp string, _ campaign) []string {
			return []string{"demo", filepath.Join(tmp, "demo"), "--batch", "--mode", "weird"}
		}, []string{"--mode: ", `"weird"`}},
		{"doctor --execution-backend", func(string, campaign) []string {
			return []string{"doctor", "--execution-backend", "weird"}
		}, []string{"--execution-backend: ", `"weird"`}},
		{"bench run --backend", func(tmp string, _ campaign) []string {
			return []string{"bench", "run", "kepler-energy", "--output", filepath.Join(tmp, "trials"), "--backend", "weird"}
		}, []string{"--backend: ", `"weird"`}},
		{"bench run --execution-backend", func(tmp string, _ campaign) []string {
			return []string{"bench", "run", "kepler-energy", "--output", filepath.Join(tmp, "trials"), "--execution-backend", "weird"}
		}, []string{"--execution-backend: ", `"weird"`}},
		{"bench grade --execution-backend", func(tmp string, _ campaign) []string {
			return []string{"bench", "grade", "kepler-energy", "--submission", tmp, "--output", filepath.Join(tmp, "grade.json"), "--execution-backend", "weird"}
		}, []string{"--execution-backend: ", `"weird"`}},
		{"worker add --execution-backend", func(string, campaign) []string {
			return []string{"worker", "add", "w1", "--host", "127.0.0.1", "--execution-backend", "weird"}
		}, []string{"--execution-backend: ", `"weird"`, "(choose auto, bubblewrap, proot-cooperative or process-cooperative)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, tmp := scratchCampaign(t)
			before := fingerprint(t, tmp)
			r := sjWith(t, scratchEnv(tmp), "", tt.args(tmp, c)...)
			t.Logf("%s", strings.TrimSpace(r.stderr))
			for _, w := range tt.want {
				checkInvalid(t, r, w)
			}
			checkNoSentinel(t, r)
			if strings.Contains(r.stderr, "not found") {
				t.Errorf("an unknown name must be reported before the environment is probed, got %s", r)
			}
			if after := fingerprint(t, tmp); after != before {
				t.Errorf("%s changed although the input was refused:\nbefore:\n%s\nafter:\n%s", tmp, before, after)
			}
		})
	}
}

// checkNoSentinel fails when the error line ends in a package's sentinel
// words ("invalid worker profile", "invalid install request"), which only
// repeat what exit 2 says.
func checkNoSentinel(t *testing.T, r result) {
	t.Helper()
	line := strings.TrimSpace(r.stderr)
	for _, s := range []string{"invalid worker profile", "invalid install request", ": invalid input", ": usage"} {
		if strings.HasSuffix(line, s) {
			t.Errorf("the error line ends in the sentinel %q: %s", s, line)
		}
	}
}

// TestRefusedStudyValues: values of the right kind that a study still
// cannot take, each refused with exit 2, one line naming the flags, and no
// campaign folder.
func TestRefusedStudyValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra func(c campaign) []string
		want  []string
	}{
		{"capabilities is a file", func(c campaign) []string {
			return []string{"--capabilities", c.hypothesis}
		}, []string{"--capabilities: ", "hypothesis.txt is a file, not a folder"}},
		{"capabilities is missing", func(c campaign) []string {
			return []string{"--capabilities", c.dir + "-caps"}
		}, []string{"--capabilities: ", "does not exist"}},
		{"structured with policy answer", func(campaign) []string {
			return []string{"--mode", "structured", "--completion-policy", "answer"}
		}, []string{"--completion-policy", "--mode", `"answer"`, "repair"}},
		{"frontier with policy answer", func(campaign) []string {
			return []string{"--mode", "frontier", "--completion-policy", "answer"}
		}, []string{"--completion-policy", "--mode", `"answer"`, "repair"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, tmp := scratchCampaign(t)
			before := fingerprint(t, tmp)
			r := sjWith(t, scratchEnv(tmp), "", c.args(60, 30, tt.extra(c)...)...)
			t.Logf("%s", strings.TrimSpace(r.stderr))
			for _, w := range tt.want {
				checkInvalid(t, r, w)
			}
			if after := fingerprint(t, tmp); after != before {
				t.Errorf("%s changed although the input was refused:\nbefore:\n%s\nafter:\n%s", tmp, before, after)
			}
		})
	}
}

// TestScientificModeExplicitRepair: naming the one policy structured and
// frontier take is accepted and recorded.
func TestScientificModeExplicitRepair(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"structured", "frontier"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			c := newCampaign(t, "selfpause")
			r := sj(t, "", c.args(120, 60, "--mode", mode, "--completion-policy", "repair")...)
			if r.code != 0 {
				t.Fatalf("--mode %s --completion-policy repair: want exit 0, got %s", mode, r)
			}
			s := sj(t, "", "status", "--campaign", c.dir, "--json")
			if !strings.Contains(s.stdout, `"completion_policy": "repair"`) {
				t.Errorf("status of a %s study with policy repair: %s", mode, s)
			}
		})
	}
}

// scratchCampaign is a new campaign whose folder does not exist yet, and the
// scratch folder holding it and its operator files.
func scratchCampaign(t *testing.T) (campaign, string) {
	c := newCampaign(t, "cubes")
	return c, filepath.Dir(c.dir)
}

// scratchEnv points HOME, the workspace and the config folder into tmp, so
// that whatever a refused command might write lands where the test looks.
func scratchEnv(tmp string) []string {
	return []string{"HOME=" + tmp, "SIMJECTURE_WORKSPACE=" + filepath.Join(tmp, "studies"),
		"SIMJECTURE_CONFIG=" + filepath.Join(tmp, "config")}
}

// studyArgs are study's flags for c with the agent backend left to extra.
func studyArgs(c campaign, extra ...string) []string {
	a := []string{"study", "--campaign", c.dir, "--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions, "--batch"}
	return append(a, extra...)
}

// TestUnusableCampaignFolder runs, as uid 65534, commands on campaign
// folders that account cannot use: one it cannot create, one it cannot
// write in, and a study whose root-owned store it cannot read. Each is the
// operator's input: exit 2, one line naming the folder and the reason,
// nothing written.
func TestUnusableCampaignFolder(t *testing.T) {
	t.Parallel()
	tmp, exe := nobodyBinary(t)
	rodir := filepath.Join(tmp, "rodir")
	if err := os.Mkdir(rodir, 0o755); err != nil {
		t.Fatal(err)
	}
	hyp, ins := filepath.Join(tmp, "h.txt"), filepath.Join(tmp, "i.txt")
	writeFile(t, hyp, "For every n >= 1, sum_{k=1..n} k^3 = (n(n+1)/2)^2.\n")
	writeFile(t, ins, "Check it numerically.\n")
	locked := rootStudy(t, tmp, "locked", 0o600)
	readOnly := rootStudy(t, tmp, "read-only", 0o644)
	newStudy := func(dir string) []string {
		return []string{"study", "--campaign", dir, "--hypothesis-file", hyp, "--instructions-file", ins,
			"--backend", "scripted", "--execution-backend", "process-cooperative", "--batch"}
	}
	tests := []struct {
		name      string
		args      []string
		untouched string
		want      []string
	}{
		{"study under a folder it cannot write", newStudy(filepath.Join(rodir, "x")), rodir,
			[]string{filepath.Join(rodir, "x") + ": cannot create it: permission denied"}},
		{"study two levels under it", newStudy(filepath.Join(rodir, "x", "y")), rodir,
			[]string{filepath.Join(rodir, "x", "y") + ": cannot create it: permission denied"}},
		{"study in an empty folder it cannot write", newStudy(rodir), rodir,
			[]string{rodir + ": cannot write in it: permission denied"}},
		{"status of an unreadable store", []string{"status", "--campaign", locked}, locked,
			[]string{locked + ": cannot read its store simjecture.db: permission denied"}},
		{"status --json of an unreadable store", []string{"status", "--campaign", locked, "--json"}, locked,
			[]string{"cannot read its store simjecture.db"}},
		{"pause of an unreadable store", []string{"pause", "--campaign", locked}, locked,
			[]string{"cannot read its store simjecture.db"}},
		{"resume of an unreadable store", []string{"resume", "--campaign", locked, "--batch"}, locked,
			[]string{"cannot read its store simjecture.db"}},
		{"study of an unreadable store", []string{"study", "--campaign", locked, "--batch"}, locked,
			[]string{"cannot read its store simjecture.db"}},
		{"status of a study in a folder it cannot write", []string{"status", "--campaign", readOnly}, readOnly,
			[]string{readOnly + ": cannot write in it", "permission denied"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fingerprint(t, tt.untouched)
			r := asNobody(t, tmp, exe, tt.args...)
			t.Logf("%s", strings.TrimSpace(r.stderr))
			for _, w := range append([]string{"--campaign"}, tt.want...) {
				checkInvalid(t, r, w)
			}
			if after := fingerprint(t, tt.untouched); after != before {
				t.Errorf("%s changed although the input was refused:\nbefore:\n%s\nafter:\n%s", tt.untouched, before, after)
			}
		})
	}
}

// rootStudy creates, as root, a paused study in tmp/name (a folder only
// root can write in) whose store has the given mode, and returns its folder.
func rootStudy(t *testing.T, tmp, name string, mode os.FileMode) string {
	t.Helper()
	c := newCampaign(t, "selfpause")
	c.dir = filepath.Join(tmp, name)
	if r := sj(t, "", c.args(120, 60)...); r.code != 0 {
		t.Fatalf("creating a paused study: %s", r)
	}
	if err := os.Chmod(filepath.Join(c.dir, "simjecture.db"), mode); err != nil {
		t.Fatal(err)
	}
	return c.dir
}

// asNobody runs exe as uid 65534 with HOME in tmp.
func asNobody(t *testing.T, tmp, exe string, args ...string) result {
	t.Helper()
	argv := append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", "env", "HOME=" + tmp, "TMPDIR=" + tmp, exe}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", argv...)
	cmd.Env = env()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("setpriv %s: %v", strings.Join(args, " "), err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// TestWorkerAddFlagsOfItsKind gives `worker add` flags that do not apply
// to the kind of worker added (contract section 13: a Slurm cluster takes
// no --cpus, --memory-mb or --run-as, the SSH fields only for its login
// node, --host; an SSH worker no --partition or --account): each is exit 2
// with one line naming the flag, and no profile is written. The same flags
// where they apply are accepted.
func TestWorkerAddFlagsOfItsKind(t *testing.T) {
	t.Parallel()
	slurm := []string{"worker", "add", "hpc", "--slurm", "--root", "/shared/sj"}
	ssh := []string{"worker", "add", "box", "--host", "127.0.0.1"}
	refused := []struct {
		args []string
		want string
	}{
		{append(slurm, "--cpus", "3"), "--cpus is for an SSH worker"},
		{append(slurm, "--memory-mb", "8192"), "--memory-mb is for an SSH worker"},
		{append(slurm, "--run-as", "sj"), "--run-as is for an SSH worker"},
		{append(slurm, "--host", "login1", "--cpus", "3"), "--cpus is for an SSH worker"},
		{append(slurm, "--port", "2222"), "--port is for the login node of a Slurm worker: give --host"},
		{append(slurm, "--user", "alice"), "--user is for the login node"},
		{append(slurm, "--identity-file", "/k"), "--identity-file is for the login node"},
		{append(slurm, "--known-hosts", "/kh"), "--known-hosts is for the login node"},
		{append(ssh, "--partition", "debug"), "--partition is for a Slurm worker (--slurm)"},
		{append(ssh, "--account", "proj"), "--account is for a Slurm worker (--slurm)"},
	}
	for _, tt := range refused {
		t.Run(strings.Join(tt.args[2:], " "), func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			r := sjWith(t, scratchEnv(tmp), "", tt.args...)
			checkInvalid(t, r, tt.want)
			if _, err := os.Stat(filepath.Join(tmp, "config", "workers")); err == nil {
				t.Errorf("a refused worker add wrote %s", filepath.Join(tmp, "config", "workers"))
			}
		})
	}
	keys := t.TempDir()
	key, kh := filepath.Join(keys, "k"), filepath.Join(keys, "kh")
	writeFile(t, key, "a key\n")
	writeFile(t, kh, "login1 ssh-ed25519 AAAA\n")
	accepted := [][]string{
		append(slurm, "--host", "login1", "--port", "2222", "--user", "alice", "--identity-file", key, "--known-hosts", kh, "--partition", "debug"),
		append(ssh, "--cpus", "3", "--memory-mb", "8192", "--run-as", "sj", "--port", "2222"),
	}
	for _, args := range accepted {
		t.Run("accepted "+strings.Join(args[2:], " "), func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			if r := sjWith(t, scratchEnv(tmp), "", args...); r.code != 0 || !strings.Contains(r.stdout, "added worker") {
				t.Errorf("want the worker added, got %s", r)
			}
		})
	}
}

// TestWorkerAddKeyFiles: an --identity-file or --known-hosts that ssh
// could not read (missing, a folder, a device) is refused when the worker
// is added: exit 2, one line naming the flag, no profile written.
func TestWorkerAddKeyFiles(t *testing.T) {
	t.Parallel()
	folder := t.TempDir()
	tests := []struct {
		flag, path, want string
	}{
		{"--identity-file", "/nonexist", "--identity-file /nonexist: does not exist"},
		{"--identity-file", folder, "--identity-file " + folder + ": is a folder, not a file"},
		{"--known-hosts", "/nonexist", "--known-hosts /nonexist: does not exist"},
		{"--known-hosts", "/dev/null", "--known-hosts /dev/null: is not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.flag+" "+tt.path, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			r := sjWith(t, scratchEnv(tmp), "", "worker", "add", "w2", "--host", "h", tt.flag, tt.path)
			checkInvalid(t, r, tt.want)
			if _, err := os.Stat(filepath.Join(tmp, "config", "workers")); err == nil {
				t.Errorf("a refused worker add wrote %s", filepath.Join(tmp, "config", "workers"))
			}
		})
	}
}

// TestInstallRefusesFirst gives `install` values that are wrong by
// themselves: the refusal is the only output, one line, exit 2, and comes
// before any probe (the Bubblewrap it would probe leaves a mark when run).
func TestInstallRefusesFirst(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flags []string
		want  string
	}{
		{[]string{"--prefix", "relative/dir"}, `--prefix "relative/dir" must be an absolute path`},
		{[]string{"--prefix", "/root/sj"}, "--prefix /root/sj is under /root"},
		{[]string{"--prefix", "/"}, "--prefix / is not an installation folder"},
		{[]string{"--account", "Not Valid"}, `--account "Not Valid" is not a valid account name`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			mark := filepath.Join(tmp, "probed")
			fake := filepath.Join(tmp, "bwrap")
			writeFile(t, fake, "#!/bin/sh\ntouch "+mark+"\nexit 1\n")
			if err := os.Chmod(fake, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"install", "--no-system-packages"}, tt.flags...)
			r := sjWith(t, append(scratchEnv(tmp), "SIMJECTURE_BWRAP="+fake), "", args...)
			checkInvalid(t, r, tt.want)
			checkNoSentinel(t, r)
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("install probed Bubblewrap before refusing %v", tt.flags)
			}
		})
	}
}
