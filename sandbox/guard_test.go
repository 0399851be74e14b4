package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// guardParentMode is the test helper mode that plays a supervisor: it starts
// an agent (os.Args[3:]) in its own process group, enclosed when
// os.Args[2] is "enclosed" and under the guard alone otherwise, waits
// os.Args[1] microseconds and kills itself with SIGKILL.
const guardParentMode = "guard-parent"

// guardMarkVar marks every process of one guard test in its environment.
const guardMarkVar = "SIMJECTURE_GUARD_TEST"

func guardParent(args []string) int {
	us, err := strconv.Atoi(firstArg(args))
	if err != nil || len(args) < 3 {
		return 2
	}
	e, err := testEnclosure(args[1] == "enclosed")
	if err != nil {
		return 2
	}
	argv := e.Wrap(os.TempDir(), nil, args[2:])
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 1
	}
	time.Sleep(time.Duration(us) * time.Microsecond)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	return 1
}

// testEnclosure is an enclosure of this test binary: with bwrap when
// enclosed, the guard alone otherwise.
func testEnclosure(enclosed bool) (Enclosure, error) {
	self, err := os.Executable()
	if err != nil || !enclosed {
		return Enclosure{self: self}, err
	}
	bwrap, err := bwrapPath()
	return Enclosure{bwrap: bwrap, self: self}, err
}

// guardCases are the two ways an agent runs: enclosed (guard, bwrap, its
// init, the agent), where bwrap works, and under the guard alone. The
// agent leaves a child in a session of its own, as a tool it ran might.
var guardCases = []struct {
	name     string
	enclosed bool
}{{"enclosed", true}, {"guard-only", false}}

const guardAgent = "setsid sleep 3600 & exec sleep 3600"

// TestGuardKillsTheAgentsTreeWithItsParent kills the parent of an agent at
// moments spread over its launch (for an enclosed one: bwrap cloning its
// init, mounting, forking the agent). Without the guard, an enclosed
// launch in about ten left bwrap's init and the agent under the host's
// init for as long as the agent ran, and every unenclosed agent left its
// setsid child. With it, nothing of any launch outlives the parent by
// more than 2 s.
func TestGuardKillsTheAgentsTreeWithItsParent(t *testing.T) {
	for _, c := range guardCases {
		t.Run(c.name, func(t *testing.T) {
			if c.enclosed && !Probe(context.Background(), Bubblewrap).Available {
				t.Skip("Bubblewrap is not usable here: the enclosure does not apply")
			}
			guardKillLoop(t, c.enclosed)
		})
	}
}

func guardKillLoop(t *testing.T, enclosed bool) {
	mark := make([]byte, 8)
	_, _ = rand.Read(mark)
	tag := guardMarkVar + "=" + hex.EncodeToString(mark)
	const launches = 60
	mode := map[bool]string{true: "enclosed", false: "guard-only"}[enclosed]
	leftAfter := 0
	for i := range launches {
		cmd := exec.Command(os.Args[0], strconv.Itoa(i*250), mode, "sh", "-c", guardAgent)
		cmd.Env = append(os.Environ(), envTestHelper+"="+guardParentMode, tag)
		_ = cmd.Run() // it kills itself
		if !waitUnmarked(tag, 2*time.Second) {
			leftAfter++
			for _, pid := range marked(tag) {
				cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				wc, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
				t.Logf("parent killed %d µs after the launch: left pid %d (%s) in %s", i*250, pid, bytes.ReplaceAll(cl, []byte{0}, []byte{' '}), wc)
			}
			killMarked(tag)
		}
	}
	if leftAfter > 0 {
		t.Fatalf("%d of %d launches left processes 2 s after their parent was killed", leftAfter, launches)
	}
}

// waitUnmarked waits until no live process carries tag in its environment.
func waitUnmarked(tag string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for len(marked(tag)) > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// marked lists the live processes whose environment holds tag.
func marked(tag string) []int {
	d, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte("\x00" + tag + "\x00")
	var out []int
	for _, e := range d {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), want) {
			continue
		}
		if st, err := readStat(pid); err == nil && !st.finished() {
			out = append(out, pid)
		}
	}
	return out
}

func killMarked(tag string) {
	for _, pid := range marked(tag) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestGuardedAgentGetsTheStop sends SIGTERM to an agent's process group,
// as a turn's stop does: the guard (and bwrap) outlive it, the agent gets
// it (its trap runs) and its exit code comes back through bwrap and the
// guard.
func TestGuardedAgentGetsTheStop(t *testing.T) { forGuardCases(t, agentGetsTheStop) }

// forGuardCases runs f under each of guardCases' enclosures (the enclosed
// one only where Bubblewrap works).
func forGuardCases(t *testing.T, f func(*testing.T, Enclosure)) {
	for _, c := range guardCases {
		t.Run(c.name, func(t *testing.T) {
			if c.enclosed && !Probe(context.Background(), Bubblewrap).Available {
				t.Skip("Bubblewrap is not usable here: the enclosure does not apply")
			}
			e, err := testEnclosure(c.enclosed)
			if err != nil {
				t.Fatal(err)
			}
			f(t, e)
		})
	}
}

func agentGetsTheStop(t *testing.T, e Enclosure) {
	dir := t.TempDir()
	script := `trap 'echo stopped > "$0/stopped"; exit 3' TERM; echo up > "$0/up"; while :; do sleep 0.01; done`
	argv := e.Wrap(dir, []string{dir}, []string{"sh", "-c", script, dir})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, err := os.Stat(dir + "/up"); err != nil; _, err = os.Stat(dir + "/up") {
		time.Sleep(5 * time.Millisecond) // the agent's first line has not run yet
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Errorf("agent stopped by SIGTERM: exit %d (%v), want its own 3", code, err)
	}
	if _, err := os.Stat(dir + "/stopped"); err != nil {
		t.Errorf("the agent's SIGTERM trap did not run: %v", err)
	}
}

// TestGuardedAgentExitStatus: an agent's exit code, or 128 + n for a
// signal n (a killed process read as a shell reads it), comes back through
// the guard (and bwrap), and the guard adds nothing to the agent's stderr
// (a Go runtime that re-raised SIGSEGV on itself printed a crash dump).
func TestGuardedAgentExitStatus(t *testing.T) {
	forGuardCases(t, func(t *testing.T, e Enclosure) {
		for _, tc := range []struct {
			script string
			want   int
		}{
			{"exit 0", 0}, {"exit 3", 3}, {"kill -SEGV $$", 139}, {"kill -ABRT $$", 134},
			{"kill -QUIT $$", 131}, {"kill -KILL $$", 137}, {"kill -TERM $$", 143},
		} {
			argv := e.Wrap(t.TempDir(), nil, []string{"sh", "-c", tc.script})
			cmd := exec.Command(argv[0], argv[1:]...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			_ = cmd.Run()
			got := cmd.ProcessState.ExitCode()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				got = 128 + int(ws.Signal())
			}
			if got != tc.want || stderr.Len() > 0 {
				t.Errorf("%q: status %d, stderr %q; want %d and nothing", tc.script, got, firstLineOf(stderr.String()), tc.want)
			}
		}
	})
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
