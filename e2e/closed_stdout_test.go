package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStudyOutlivesItsClosedStdout: `study --batch --jsonl` whose reader
// went away (as `| head -c 1`) goes on to its own end — its agent cancels
// it — instead of dying of SIGPIPE with receipts left running; a SIGHUP
// (the terminal or the SSH session gone) pauses it, to be resumed, with no
// receipt left running.
func TestStudyOutlivesItsClosedStdout(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here:\n%s", r)
	}
	for _, tc := range []struct {
		name          string
		hangUp, nohup bool
		want          string
	}{
		{"closed stdout", false, false, "cancelled"},
		{"hang-up", true, false, "paused"},               // to be resumed; SIGTERM and Ctrl-C cancel
		{"hang-up under nohup", true, true, "cancelled"}, // ignored, as nohup asks: the agent cancels
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKillStudy(t)
			cmd := exec.Command(bin, append(k.args(), "--jsonl")...)
			if tc.nohup {
				cmd = exec.Command("sh", append([]string{"-c", `trap "" HUP; exec "$0" "$@"`, bin}, append(k.args(), "--jsonl")...)...)
			}
			cmd.Env = env()
			out, err := cmd.StdoutPipe()
			must(t, err)
			must(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			if _, err := out.Read(make([]byte, 1)); err != nil {
				t.Fatalf("no first byte of output: %v", err)
			}
			must(t, out.Close()) // nobody reads the rest
			waitFor(t, 30*time.Second, "a receipt after stdout closed", func() bool {
				snap, err := tryStatus(t, k.dir)
				return err == nil && len(snap.withStatus("succeeded")) > 0
			})
			if tc.hangUp {
				must(t, cmd.Process.Signal(syscall.SIGHUP))
			}
			if !tc.hangUp || tc.nohup {
				writeFile(t, filepath.Join(filepath.Dir(k.exe), "stop"), "") // the agent cancels its study
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(50 * time.Second):
				t.Fatal("the study did not end within 50 s")
			}
			if st := cmd.ProcessState.Sys().(syscall.WaitStatus); st.Signaled() {
				t.Fatalf("the supervisor was killed by %v", st.Signal())
			}
			snap := status(t, k.dir)
			if snap.Status != tc.want {
				t.Errorf("status %q, want %q", snap.Status, tc.want)
			}
			if run := snap.withStatus("running"); len(run) > 0 {
				t.Errorf("receipts still running: %+v", run)
			}
		})
	}
}

// TestAgentCancelIsAttributed: an enclosed agent may cancel its own study
// (`simjecture cancel` from inside); the record says the agent asked, where
// an operator's cancel from outside says nothing of the kind.
func TestAgentCancelIsAttributed(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here:\n%s", r)
	}
	for _, tc := range []struct {
		name, want string
	}{
		{"by the agent", "agent"},
		{"by the operator", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKillStudy(t)
			if tc.want == "agent" {
				writeFile(t, filepath.Join(filepath.Dir(k.exe), "stop"), "") // its first turn cancels
			}
			sup := startGroup(t, k.args())
			if tc.want == "" {
				waitFor(t, 30*time.Second, "a receipt", func() bool {
					snap, err := tryStatus(t, k.dir)
					return err == nil && len(snap.Experiments) > 0
				})
				if r := sj(t, "", "cancel", "--campaign", k.dir); r.code != 0 {
					t.Fatalf("cancel: %s", r)
				}
			}
			sup.wait(t, 30*time.Second)
			by, found := "", false
			for _, line := range strings.Split(sj(t, "", "watch", "--campaign", k.dir, "--jsonl").stdout, "\n") {
				var ev struct {
					Type    string `json:"type"`
					Payload struct {
						Command string `json:"command"`
						By      string `json:"by"`
					} `json:"payload"`
				}
				if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "control_requested" && ev.Payload.Command == "cancel" {
					by, found = ev.Payload.By, true
				}
			}
			if !found || by != tc.want {
				t.Errorf("control_requested cancel found %v, by %q; want by %q", found, by, tc.want)
			}
		})
	}
}

// TestWatchEndsWhenItsStdoutCloses: `watch --jsonl | head -c 1` on a
// running study ends once a write fails, instead of waiting for the study.
func TestWatchEndsWhenItsStdoutCloses(t *testing.T) {
	t.Parallel()
	if r := sj(t, "", "doctor", "--execution-backend", "bubblewrap"); r.code != 0 {
		t.Skipf("bubblewrap is not available here:\n%s", r)
	}
	k := newKillStudy(t)
	sup := startGroup(t, k.args())
	waitFor(t, 30*time.Second, "the study", func() bool { _, err := tryStatus(t, k.dir); return err == nil })
	w := exec.Command(bin, "watch", "--campaign", k.dir, "--jsonl")
	w.Env = env()
	out, err := w.StdoutPipe()
	must(t, err)
	must(t, w.Start())
	if _, err := out.Read(make([]byte, 1)); err != nil {
		t.Fatalf("no first byte from watch: %v", err)
	}
	must(t, out.Close())
	done := make(chan struct{})
	go func() { _ = w.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = w.Process.Kill()
		t.Fatal("watch still runs 20 s after its stdout closed")
	}
	writeFile(t, filepath.Join(filepath.Dir(k.exe), "stop"), "")
	sup.wait(t, 30*time.Second)
}
