package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDetachSupervisor starts a stand-in for the binary that reports how
// it was started, then exits 3: it runs `resume --campaign DIR --batch` as
// the leader of its own session, reads /dev/null, writes to
// DIR/supervisor/background.log (appending), and its exit arrives on
// Exited with the log's tail.
func TestDetachSupervisor(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "study")
	exe := filepath.Join(t.TempDir(), "stand-in")
	script := "#!/bin/sh\n" +
		"echo \"args: $*\"\n" +
		"echo \"stdin: $(readlink /proc/$$/fd/0)\"\n" +
		"awk '{print \"pid=\" $1 \" sid=\" $6}' /proc/$$/stat\n" +
		"echo 'study is completed' >&2\n" +
		"exit 3\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "supervisor", backgroundLog)
	for round := 1; round <= 2; round++ {
		d, err := detachSupervisor(exe, dir)
		if err != nil {
			t.Fatal(err)
		}
		var exitErr error
		select {
		case exitErr = <-d.Exited:
		case <-time.After(10 * time.Second):
			t.Fatal("the stand-in did not exit within 10 s")
		}
		if exitErr == nil || !strings.Contains(exitErr.Error(), "exit status 3") || !strings.HasSuffix(exitErr.Error(), "study is completed") {
			t.Fatalf("round %d: Exited = %v, want the exit status and the log's tail", round, exitErr)
		}
		d.Stop() // after the exit: a no-op, not a signal to a reused pid
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		log := string(b)
		session := "pid=" + strconv.Itoa(d.PID) + " sid=" + strconv.Itoa(d.PID)
		if !strings.Contains(log, session) {
			t.Fatalf("round %d: the stand-in must lead its own session (%q):\n%s", round, session, log)
		}
		for _, want := range []string{"args: resume --campaign " + dir + " --batch", "stdin: /dev/null"} {
			if strings.Count(log, want) != round {
				t.Fatalf("round %d: want %q %d times in background.log (appended):\n%s", round, want, round, log)
			}
		}
	}
}
