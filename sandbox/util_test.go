package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const nobody = 65534

func signalContext() context.Context {
	ctx, _ := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	return ctx
}

var (
	sharedOnce sync.Once
	sharedPath string
	sharedErr  error
)

// sharedDir is a world-readable folder holding a copy of the test binary,
// so that tests can run it as nobody.
func sharedDir(t testing.TB) string {
	t.Helper()
	sharedOnce.Do(func() {
		sharedPath, sharedErr = os.MkdirTemp("", "sandbox-test-")
		if sharedErr != nil {
			return
		}
		sharedErr = os.Chmod(sharedPath, 0o755)
		if sharedErr == nil {
			sharedErr = copyFile(os.Args[0], filepath.Join(sharedPath, "sandbox.test"), 0o755)
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedPath
}

func cleanupShared() {
	if sharedPath != "" {
		removeTree(sharedPath)
	}
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// testDir makes a private folder for one test; for nobody it lives in the
// shared folder and belongs to nobody.
func testDir(t testing.TB, asNobody bool) string {
	t.Helper()
	if !asNobody {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp(sharedDir(t), "case-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(dir) })
	return dir
}

// experiment describes a test experiment: files written to research/ and
// sealed, a command, declared outputs and limits.
type experiment struct {
	backend  Backend
	files    map[string]string
	command  []string
	outputs  []string
	timeout  time.Duration
	memory   int64
	maxFile  int64
	space    int64
	env      map[string]string
	asNobody bool
	noGate   bool // the ptrace stop instead of the start gate (forceNoGate, as nobody)
	readOnly []Mount
}

func (e experiment) spec(t testing.TB) Spec {
	t.Helper()
	dir := testDir(t, e.asNobody)
	t.Cleanup(Settle) // before dir goes: the run folders' worker may still write in it
	research := filepath.Join(dir, "research")
	var sealed []SealedFile
	for rel, body := range e.files {
		p := filepath.Join(research, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o644))
		sum, _, err := HashFile(p)
		must(t, err)
		sealed = append(sealed, SealedFile{Rel: rel, HostPath: p, SHA256: sum})
	}
	if e.asNobody {
		must(t, chownTree(dir))
	}
	self := os.Args[0]
	if e.asNobody {
		self = filepath.Join(sharedDir(t), "sandbox.test")
	}
	self, _ = filepath.Abs(self)
	return Spec{
		Backend: e.backend, SelfExe: self, Sealed: sealed, Command: e.command,
		RunDir: filepath.Join(dir, "run"), ArtifactDir: filepath.Join(dir, "artifacts"),
		Env: e.env, Outputs: e.outputs, Timeout: orDur(e.timeout, 30*time.Second), CPUs: 1,
		MemoryBytes: e.memory, MaxFileBytes: e.maxFile, WorkspaceBytes: e.space, ReadOnly: e.readOnly,
	}
}

func orDur(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func chownTree(dir string) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// run executes the experiment in-process, or as nobody through the test
// binary's "run" mode.
func (e experiment) run(t testing.TB) (Result, Spec, error) {
	t.Helper()
	spec := e.spec(t)
	if !e.asNobody {
		res, err := Run(context.Background(), spec)
		return res, spec, err
	}
	res, msg := runSpecAsNobody(t, spec, e.noGate)
	if msg != "" {
		return res, spec, &stringError{msg}
	}
	return res, spec, nil
}

type stringError struct{ s string }

func (e *stringError) Error() string { return e.s }

// nobodyCommand runs the shared test binary as nobody in the given mode.
func nobodyCommand(t testing.TB, mode string, args ...string) *exec.Cmd {
	t.Helper()
	bin := filepath.Join(sharedDir(t), "sandbox.test")
	argv := append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)
	cmd := exec.Command("setpriv", argv...)
	cmd.Env = []string{envTestHelper + "=" + mode, "PATH=/usr/bin:/bin", raceNoExitSleep}
	cmd.Dir = "/"
	return cmd
}

func runJSON(t testing.TB, cmd *exec.Cmd, v any) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%v: bad JSON %q: %v\n%s", cmd.Args, out, err, stderr.String())
	}
}

// markerProcs lists the pids whose command line contains marker.
func markerProcs(marker string) []int {
	var pids []int
	names, _ := readDirNames("/proc")
	for _, n := range names {
		b, err := os.ReadFile("/proc/" + n + "/cmdline")
		if err != nil || !strings.Contains(string(b), marker) || !strings.HasPrefix(string(b), "sh\x00") {
			continue
		}
		var pid int
		if _, err := fmtSscan(n, &pid); err == nil && pid != os.Getpid() {
			if st, err := readStat(pid); err == nil && st.state != 'Z' {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		<-tick.C
	}
}

func readArtifact(t testing.TB, spec Spec, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(spec.ArtifactDir, rel))
	must(t, err)
	return string(b)
}

func fmtSscan(s string, pid *int) (int, error) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, &stringError{"not a pid"}
		}
		n = n*10 + int(c-'0')
	}
	*pid = n
	return 1, nil
}
