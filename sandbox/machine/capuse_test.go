package machine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gatedCapability is capability "tool" whose tool makes a fifo gate in its
// workspace, waits for a line on it, then copies its runtime's note (note
// being that version's text) into out.txt.
func gatedCapability(t *testing.T, w *testWorker, note string) Capability {
	t.Helper()
	c := testCapability(t, w.dir, "tool")
	writeTestFile(t, filepath.Join(c.Runtime, "bin", "tool"),
		"#!/bin/sh\nmkfifo gate && read line < gate && cat \"$TOOL_HOME/share/note.txt\" > out.txt\n", 0o755)
	writeTestFile(t, filepath.Join(c.Runtime, "share", "note.txt"), note, 0o644)
	return testCapability2(t, c)
}

// waitExists waits (with a deadline) until the path p exists.
func waitExists(t *testing.T, p string, running <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if _, err := os.Stat(p); err == nil {
			return
		}
		select {
		case err := <-running:
			t.Fatalf("the job ended before %s appeared: %v", p, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not appear within 30s", p)
}

// TestCapabilityReshipUnderRunningJob: shipping a changed capability while
// a job of the old version runs installs the new version beside it; the job
// reads its own version to the end, the old folder is removed when it
// ends, and a later job of the old hash is refused, not run on the new one.
func TestCapabilityReshipUnderRunningJob(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, 60e9)
	ctx := context.Background()
	v1 := gatedCapability(t, w, "version 1\n")
	if _, err := shipOne(ctx, w.m.sess, v1); err != nil {
		t.Fatal(err)
	}
	spec := capSpec(w, v1)
	ran := make(chan error, 1)
	go func() { _, _, err := w.m.Run(ctx, "job_swap", spec); ran <- err }()
	gate := filepath.Join(w.d.root, "runs", "job_swap", "work", "gate")
	waitExists(t, gate, ran)
	t.Cleanup(func() { // a failed test lets the job end instead of waiting out its timeout
		if f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_, _ = f.WriteString("go\n")
			_ = f.Close()
		}
	})

	v2 := gatedCapability(t, w, "version 2\n")
	if rep, err := shipOne(ctx, w.m.sess, v2); err != nil || !rep.Copied {
		t.Fatalf("re-ship of a changed capability while a job runs = %+v, %v", rep, err)
	}
	old := w.d.capRuntime("tool", v1.Hash)
	if _, err := os.Stat(filepath.Join(old, "share", "note.txt")); err != nil {
		t.Fatalf("the running job's runtime was removed under it: %v", err)
	}
	if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatalf("the v1 job: %v", err)
	}
	if out, _ := os.ReadFile(filepath.Join(spec.ArtifactDir, "out.txt")); string(out) != "version 1\n" {
		t.Errorf("the v1 job read %q, want its own version's note", out)
	}
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the replaced version's folder is kept after its last job ended: %v", err)
	}
	if got := w.d.capabilities(); got["tool"] != v2.Hash {
		t.Errorf("installed %v, want tool → v2 %s", got, v2.Hash)
	}
	_, _, err := w.m.Run(ctx, "job_old", capSpec(w, v1))
	if err == nil || !strings.Contains(err.Error(), "the study froze "+v1.Hash) {
		t.Errorf("a later job of the replaced hash = %v, want it refused", err)
	}
}

// TestCapabilityPrune: a starting daemon removes what no installed version
// names (a runtime folder of the older layout, a replaced version, an
// install cut short) and keeps the installed one, which still runs.
func TestCapabilityPrune(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, 60e9)
	c := testCapability(t, w.dir, "tool")
	if _, err := shipOne(context.Background(), w.m.sess, c); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(w.d.capsDir(), "tool")
	stale := []string{"runtime", "runtime-" + strings.Repeat("ab", 32), ".new-123"}
	for _, s := range stale {
		writeTestFile(t, filepath.Join(home, s, "x"), "x", 0o644)
	}
	w.d.pruneCapabilities()
	for _, s := range stale {
		if _, err := os.Stat(filepath.Join(home, s)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s kept: %v", s, err)
		}
	}
	if got := w.d.capabilities(); got["tool"] != c.Hash {
		t.Errorf("installed %v after the prune, want tool → %s", got, c.Hash)
	}
}
