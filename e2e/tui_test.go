package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The terminal UI under tmux: each test starts the binary in its own tmux
// server (a private socket), sends keys and polls the captured screen for
// the text it expects, with a deadline.

// screen is one tmux session running the binary.
type screen struct {
	t      *testing.T
	socket string
	name   string
}

// tuiScreen starts argv in a detached 100×30 tmux session.
func tuiScreen(t *testing.T, envv []string, argv ...string) *screen {
	t.Helper()
	return tuiScreenSized(t, 100, 30, envv, argv...)
}

// tuiScreenSized starts argv in a detached w×h tmux session.
func tuiScreenSized(t *testing.T, w, h int, envv []string, argv ...string) *screen {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	s := &screen{t: t, socket: "sj-e2e-" + randomHex(t), name: "tui"}
	args := []string{"new-session", "-d", "-s", s.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "--"}
	// -f /dev/null: no tmux.conf of the host's changes the terminal the
	// TUI sees (default-terminal sets the pane's TERM).
	s.tmux(envv, append([]string{"-f", "/dev/null"}, append(args, argv...)...)...)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

func (s *screen) tmux(envv []string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...)
	cmd.Env = envv
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// capture is the visible screen, or "" once the session has ended.
func (s *screen) capture() string {
	out, err := exec.Command("tmux", "-L", s.socket, "capture-pane", "-p", "-t", s.name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// keys sends tmux key names (Tab, Enter, C-s, x, …), one at a time.
func (s *screen) keys(keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		s.tmux(nil, "send-keys", "-t", s.name, k)
	}
}

// typeText sends literal text.
func (s *screen) typeText(text string) {
	s.t.Helper()
	s.tmux(nil, "send-keys", "-t", s.name, "-l", text)
}

// waitFor polls the screen until cond holds or timeout passes.
func (s *screen) waitFor(timeout time.Duration, what string, cond func(string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		scr := s.capture()
		if cond(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out after %v waiting for %s; the screen:\n%s", timeout, what, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitText waits until every text is on screen.
func (s *screen) waitText(timeout time.Duration, texts ...string) string {
	s.t.Helper()
	return s.waitFor(timeout, fmt.Sprintf("%q", texts), func(scr string) bool {
		for _, x := range texts {
			if !strings.Contains(scr, x) {
				return false
			}
		}
		return true
	})
}

// waitGone waits until text is no longer on screen.
func (s *screen) waitGone(timeout time.Duration, text string) string {
	s.t.Helper()
	return s.waitFor(timeout, fmt.Sprintf("%q to disappear", text), func(scr string) bool { return !strings.Contains(scr, text) })
}

// waitExit waits for the program (and so the session) to end.
func (s *screen) waitExit(timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for exec.Command("tmux", "-L", s.socket, "has-session", "-t", s.name).Run() == nil {
		if time.Now().After(deadline) {
			s.t.Fatalf("the UI did not exit within %v; the screen:\n%s", timeout, s.capture())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tuiEnv() []string { return append(env(), "TERM=xterm-256color", "NO_COLOR=1") }

// TestTUIOpensFinishedDemo opens the dashboard of a finished demo study
// and finds its panes, then leaves with q.
func TestTUIOpensFinishedDemo(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	if r := sj(t, "", "demo", dir, "--batch"); r.code != 0 {
		t.Fatalf("demo --batch: %s", r)
	}
	s := tuiScreen(t, tuiEnv(), bin, "tui", "--campaign", dir)
	scr := s.waitText(10*time.Second, "COMPLETED", "Study", "Claims", "Experiments", "Processes", "Reviews", "Activity",
		"Hypothesis:", "succeeded", "[Bubblewrap · isolated]")
	if !strings.Contains(scr, "×") && !strings.Contains(scr, "✓") {
		t.Errorf("the claim tree shows no status marker:\n%s", scr)
	}
	s.keys("?")
	s.waitText(5*time.Second, "Keys: dashboard", "any key closes this help")
	s.keys("Escape")
	s.waitGone(5*time.Second, "any key closes this help")
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// TestTUICooperativeStudyAsUnprivilegedAccount starts a study in PRoot from
// the new-study form as uid 65534, sees the isolation warning, dismisses it
// with x, sees the mode indicator, reopens it with w, and leaves (which
// pauses the study after asking).
func TestTUICooperativeStudyAsUnprivilegedAccount(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to drop to uid 65534 with setpriv")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	tmp := nobodyDir(t)
	exe := filepath.Join(tmp, "simjecture")
	copyExec(t, bin, exe)
	agentPath := filepath.Join(tmp, "agent.sh")
	copyExec(t, filepath.Join("testdata", "tui_agent.sh"), agentPath)
	home := filepath.Join(tmp, "home")
	ws := filepath.Join(home, "studies")
	for _, d := range []string{home, ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	drop := []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		"env", "HOME=" + home, "SIMJECTURE_WORKSPACE=" + ws, "NO_COLOR=1", "TERM=xterm-256color"}
	probe := exec.Command(drop[0], append(drop[1:], exe, "doctor", "--execution-backend", "proot-cooperative", "--json")...)
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("the proot-cooperative backend is not available to uid 65534 here (%v): %s", err, out)
	}
	s := tuiScreen(t, tuiEnv(), append(drop, exe, "tui")...)
	s.waitText(10*time.Second, "studies in "+ws, "n new study")
	s.keys("n")
	s.waitText(10*time.Second, "New study", "PRoot · cooperative — not a security sandbox", "Native process · trusted host — not a security sandbox")
	s.typeText("Sleeping does not change the answer.")
	s.keys("Tab", "Tab")
	s.typeText("Keep the study busy.")
	s.keys("Tab", "Tab", "Right", "Right", "Right") // agent backend: codex → claude → api → command
	s.waitText(5*time.Second, "‹ command ›")
	s.keys("Tab", "Tab")
	s.typeText(agentPath)
	for range 4 {
		s.keys("Tab")
	}
	s.waitText(10*time.Second, "(•) Auto")
	s.keys("Right", "Right")
	s.waitText(5*time.Second, "(•) PRoot · cooperative")
	s.keys("C-s")
	s.waitText(5*time.Second, "Review the frozen contract", "PRoot · cooperative", "not a security sandbox")
	s.keys("Enter")
	s.waitText(20*time.Second, "Cooperative execution", "is not a security sandbox.", "[PRoot · cooperative ⚠]", "supervising")
	s.keys("x")
	scr := s.waitGone(5*time.Second, "Cooperative execution")
	if !strings.Contains(scr, "[PRoot · cooperative ⚠]") {
		t.Fatalf("after x the mode indicator must stay:\n%s", scr)
	}
	s.keys("w")
	scr = s.waitText(5*time.Second, "Cooperative execution")
	if strings.Contains(scr, "Supervisor error") || !strings.Contains(scr, "supervising") {
		// Seen once in a loaded CI run: the study's supervisor had stopped,
		// so q left without asking. Say why instead of timing out below.
		t.Fatalf("the supervisor is not running any more:\n%s", scr)
	}
	t.Logf("before q:\n%s", scr)
	s.keys("q")
	s.waitText(5*time.Second, "Pause the study and leave?")
	s.keys("y")
	// The dashboard was opened from the home screen, so leaving returns there.
	s.waitText(15*time.Second, "studies in "+ws, "paused", "PRoot · cooperative ⚠")
	s.keys("q")
	s.waitExit(5 * time.Second)
	entries, _ := os.ReadDir(ws)
	if len(entries) != 1 {
		t.Fatalf("want one study under %s, found %d", ws, len(entries))
	}
	snap := status(t, filepath.Join(ws, entries[0].Name()))
	if snap.Status != "paused" || snap.ExecutionBackend != "proot-cooperative" {
		t.Errorf("after leaving: status %q backend %q, want paused proot-cooperative", snap.Status, snap.ExecutionBackend)
	}
}

// TestTUIPausesResumesAndCancelsFromKeyboard attaches to a study a --batch
// supervisor runs, pauses it with p (the supervisor exits), resumes it with
// r (this process supervises it now), and cancels it with c and y.
func TestTUIPausesResumesAndCancelsFromKeyboard(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "tui")
	reapMarker(t, c.marker)
	agentPath := filepath.Join(t.TempDir(), "agent.sh")
	copyExec(t, filepath.Join("testdata", "tui_agent.sh"), agentPath)
	args := []string{"study", "--campaign", c.dir, "--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "command", "--executable", agentPath, "--execution-backend", "bubblewrap",
		"--wall-seconds", "600", "--turn-seconds", "120", "--batch"}
	sup := start(t, args...)
	waitFor(t, 20*time.Second, "a running experiment", func() bool {
		snap, err := tryStatus(t, c.dir)
		return err == nil && len(snap.withStatus("running")) > 0 && len(procsWith(c.marker)) > 0
	})
	s := tuiScreen(t, tuiEnv(), bin, "tui", "--campaign", c.dir)
	s.waitText(10*time.Second, "RUNNING", "attached", "sleep.sh", "running")
	s.keys("p")
	sup.wait(t, 10*time.Second)
	s.waitText(10*time.Second, "PAUSED")
	s.keys("r")
	scr := s.waitText(20*time.Second, "RUNNING", "supervising", "sleep.sh")
	t.Logf("resumed in the UI's own process:\n%s", scr)
	waitFor(t, 20*time.Second, "the resumed study's experiment", func() bool { return len(procsWith(c.marker)) > 0 })
	s.keys("c")
	s.waitText(5*time.Second, "Cancel the study?")
	s.keys("y")
	s.waitText(10*time.Second, "CANCELLED")
	if snap := status(t, c.dir); snap.Status != "cancelled" {
		t.Errorf("status after cancel = %q", snap.Status)
	}
	waitFor(t, 5*time.Second, "no experiment process left", func() bool { return len(procsWith(c.marker)) == 0 })
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// nobodyDir is a temporary folder uid 65534 can enter and read.
func nobodyDir(t *testing.T) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", "simjecture-e2e-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	return tmp
}

func copyExec(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
