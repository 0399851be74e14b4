// Package e2e holds black-box end-to-end tests of the simjecture binary.
//
// TestMain builds the binary once; every test drives it with os/exec in its
// own temporary campaign folder and checks only what a user or a script can
// see: exit codes, stdout and stderr, `status --json`, the campaign files and
// the processes left on the host. The package imports no project package.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	// bin is the simjecture binary under test.
	bin string
	// agent is the scripted command agent (testdata/agent.py), copied so it
	// is executable whatever the checkout did to its mode bits.
	agent string
	// workspace is $SIMJECTURE_WORKSPACE for every command.
	workspace string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "simjecture-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return m.Run()
}

func build(tmp string) error {
	root, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	bin = filepath.Join(tmp, "simjecture")
	workspace = filepath.Join(tmp, "workspace")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/simjecture/simjecture")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "agent.py"))
	if err != nil {
		return err
	}
	agent = filepath.Join(tmp, "agent.py")
	return os.WriteFile(agent, src, 0o755)
}

// env is the environment of every command: the test's own, without any
// SIMJECTURE_ variable that could point the binary elsewhere, plus extra.
func env(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SIMJECTURE_") {
			out = append(out, kv)
		}
	}
	return append(append(out, "SIMJECTURE_WORKSPACE="+workspace), extra...)
}

// result is what one finished command left behind.
type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %v\nstdout:\n%s\nstderr:\n%s", r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// sj runs the binary to completion (at most a minute) with stdin.
func sj(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return sjWith(t, nil, stdin, args...)
}

// sjWith is sj with extra environment variables.
func sjWith(t *testing.T, extra []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env(extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("simjecture %s: %v", strings.Join(args, " "), err)
	}
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(start), code: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		t.Fatalf("simjecture %s did not finish within a minute:\n%s", strings.Join(args, " "), r)
	}
	return r
}

// bg is a simjecture process running in the background.
type bg struct {
	cmd    *exec.Cmd
	out    *bytes.Buffer
	errb   *bytes.Buffer
	done   chan struct{}
	exited time.Time
}

// start runs the binary in the background; the test's cleanup kills it if
// it is still running.
func start(t *testing.T, args ...string) *bg {
	t.Helper()
	return startEnv(t, nil, args...)
}

// startEnv is start with extra environment variables.
func startEnv(t *testing.T, extra []string, args ...string) *bg {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env(extra...)
	b := &bg{cmd: cmd, out: &bytes.Buffer{}, errb: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = b.out, b.errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("start simjecture %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		_ = cmd.Wait()
		b.exited = time.Now()
		close(b.done)
	}()
	t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			_ = cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

// wait waits up to timeout for the process to exit and returns its result.
func (b *bg) wait(t *testing.T, timeout time.Duration) result {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(timeout):
		_ = b.cmd.Process.Kill()
		<-b.done
		t.Fatalf("simjecture %s did not exit within %v:\nstdout:\n%s\nstderr:\n%s",
			strings.Join(b.cmd.Args[1:], " "), timeout, b.out, b.errb)
	}
	return b.result()
}

// result is the outcome of a process that has exited.
func (b *bg) result() result {
	<-b.done
	return result{code: b.cmd.ProcessState.ExitCode(), stdout: b.out.String(), stderr: b.errb.String()}
}

func (b *bg) exitedYet() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// waitFor polls cond every 25 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// The snapshot of `status --json` (contract section 6), as far as the tests
// read it.
type snapshot struct {
	Status           string    `json:"status"`
	ExecutionBackend string    `json:"execution_backend"`
	Deadline         time.Time `json:"deadline"`
	Experiments      []receipt `json:"experiments"`
	Claims           []claim   `json:"claims"`
	Reviews          []review  `json:"reviews"`
	Notes            []struct {
		Statement string `json:"statement"`
	} `json:"notes"`
	UnreachableWorkers []string `json:"unreachable_workers"`
}

// notes renders the study's notes (the test agent explains itself there).
func (s snapshot) notes() string {
	var b strings.Builder
	for _, n := range s.Notes {
		b.WriteString("\n  note: " + n.Statement)
	}
	return b.String()
}

type receipt struct {
	ID               string              `json:"id"`
	Status           string              `json:"status"`
	IsolationBackend string              `json:"isolation_backend"`
	Source           string              `json:"source"`
	Args             []string            `json:"args"`
	Key              string              `json:"key"`
	Artifacts        map[string]artifact `json:"artifacts"`
	ArtifactDir      string              `json:"artifact_dir"`
	Returncode       *int                `json:"returncode"`
	Guidance         []string            `json:"guidance"`
	Machine          string              `json:"machine"`
	Remote           *struct {
		Host string `json:"host"`
		Job  string `json:"job"`
		Node string `json:"node"`
	} `json:"remote"`
	Error string `json:"error"`
}

type artifact struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

type claim struct {
	ID     string  `json:"id"`
	Parent *string `json:"parent"`
	Status string  `json:"status"`
}

type review struct {
	ID      string `json:"id"`
	Claim   string `json:"claim"`
	Status  string `json:"status"`
	Verdict *struct {
		Decision string `json:"decision"`
	} `json:"verdict"`
}

func (s snapshot) claim(id string) (claim, bool) {
	for _, c := range s.Claims {
		if c.ID == id {
			return c, true
		}
	}
	return claim{}, false
}

func (s snapshot) experiment(id string) (receipt, bool) {
	for _, e := range s.Experiments {
		if e.ID == id {
			return e, true
		}
	}
	return receipt{}, false
}

// withStatus lists the receipts in one of the statuses.
func (s snapshot) withStatus(statuses ...string) []receipt {
	var out []receipt
	for _, e := range s.Experiments {
		for _, st := range statuses {
			if e.Status == st {
				out = append(out, e)
			}
		}
	}
	return out
}

// status reads `status --campaign DIR --json`, failing the test on error.
func status(t *testing.T, dir string) snapshot {
	t.Helper()
	snap, err := tryStatus(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// tryStatus reads the snapshot, returning an error instead of failing, for
// polling while a study is being created.
func tryStatus(t *testing.T, dir string) (snapshot, error) {
	t.Helper()
	r := sj(t, "", "status", "--campaign", dir, "--json")
	var snap snapshot
	if r.code != 0 {
		return snap, fmt.Errorf("status --json: %s", r)
	}
	if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil {
		return snap, fmt.Errorf("status --json is not one JSON object: %v\n%s", err, r.stdout)
	}
	return snap, nil
}

// campaign describes a study to create: its folder and operator files.
type campaign struct {
	dir, hypothesis, instructions string
	marker                        string
}

// newCampaign writes the hypothesis and instruction files for an agent
// mode (see testdata/agent.py) and names a campaign folder that does not
// exist yet. settings are extra "e2e-KEY: VALUE" lines.
func newCampaign(t *testing.T, mode string, settings ...string) campaign {
	t.Helper()
	tmp := t.TempDir()
	c := campaign{
		dir:          filepath.Join(tmp, "study"),
		hypothesis:   filepath.Join(tmp, "hypothesis.txt"),
		instructions: filepath.Join(tmp, "instructions.txt"),
		marker:       "e2e-" + randomHex(t),
	}
	ins := fmt.Sprintf("End-to-end test study.\ne2e-mode: %s\ne2e-marker: %s\n%s\n", mode, c.marker, strings.Join(settings, "\n"))
	writeFile(t, c.hypothesis, "For every n >= 1, sum_{k=1..n} k^3 = (n(n+1)/2)^2.\n")
	writeFile(t, c.instructions, ins)
	return c
}

// args are the flags of `study` for this campaign with the scripted agent.
func (c campaign) args(wall, turn int, extra ...string) []string {
	a := []string{"study", "--campaign", c.dir, "--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "command", "--executable", agent, "--execution-backend", "bubblewrap",
		"--wall-seconds", fmt.Sprint(wall), "--turn-seconds", fmt.Sprint(turn), "--batch"}
	return append(a, extra...)
}

// pausedStudy creates a study whose agent pauses it in its first turn, so
// the campaign holds an open study that no supervisor owns.
func pausedStudy(t *testing.T) campaign {
	t.Helper()
	c := newCampaign(t, "selfpause")
	r := sj(t, "", c.args(120, 60)...)
	if r.code != 0 {
		t.Fatalf("creating a paused study: %s", r)
	}
	if s := status(t, c.dir); s.Status != "paused" {
		t.Fatalf("a study whose agent pauses it is %q, want paused", s.Status)
	}
	return c
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// procsWith lists the pids of live processes whose command line contains
// marker (zombies, which hold no resources, are skipped).
func procsWith(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	self := os.Getpid()
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && isZombie(st) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// describe renders the command lines of pids for a failure message.
func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		fmt.Fprintf(&b, "\n  %d: %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
	return b.String()
}

// reapMarker kills, at cleanup, processes this test started (recognised by
// its unique marker) that the product failed to stop, so a failing run
// does not leave sleepers behind.
func reapMarker(t *testing.T, marker string) {
	t.Cleanup(func() {
		for _, pid := range procsWith(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// lines splits output into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
