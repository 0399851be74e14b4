package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTUIReleasesAStudyItPaused: a new user opens a paused study from the
// home screen, resumes it with r (the UI's process supervises it), leaves
// with q and y (which pauses it) and stays on the home screen; from
// another shell, `resume --batch` is accepted at once and finishes the
// study. The agent waits in its turns until the test creates DIR/go, then
// is the cubes agent (as worker and as reviewer).
func TestTUIReleasesAStudyItPaused(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "cubes")
	wrapper := filepath.Join(t.TempDir(), "agent.sh")
	gate := filepath.Join(c.dir, "go")
	writeFile(t, wrapper, fmt.Sprintf("#!/bin/sh\nif [ -e %q ]; then exec %q; fi\ncat > /dev/null\nexec sleep 300\n", gate, agent))
	pauseGatedStudy(t, c, wrapper)

	ws := filepath.Dir(c.dir)
	s := tuiScreen(t, tuiEnv(), "env", "SIMJECTURE_WORKSPACE="+ws, bin, "tui")
	s.waitText(10*time.Second, "studies in "+ws, "paused")
	s.keys("Enter")
	s.waitText(10*time.Second, "PAUSED")
	s.keys("r")
	s.waitText(20*time.Second, "RUNNING", "supervising")
	s.keys("q")
	s.waitText(5*time.Second, "Pause the study and leave?")
	s.keys("y")
	s.waitText(15*time.Second, "studies in "+ws, "paused")

	writeFile(t, gate, "\n")
	r := sj(t, "", "resume", "--campaign", c.dir, "--batch")
	if r.code != 0 {
		t.Fatalf("resume --batch while the UI shows the home screen: want exit 0, got %s", r)
	}
	if snap := status(t, c.dir); snap.Status != "completed" {
		t.Errorf("after resume --batch the study is %q, want completed", snap.Status)
	}
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// TestTUICreatesAnAPIStudy: the new-study form offers the connection file
// for the api backend; the study it creates records the backend and the
// file, and its turns talk to the mock endpoint.
func TestTUICreatesAnAPIStudy(t *testing.T) {
	t.Parallel()
	a := newAPIStudy(t, nil)
	ws := filepath.Join(t.TempDir(), "studies")
	s := tuiScreen(t, tuiEnv(), "env", "SIMJECTURE_WORKSPACE="+ws, "SIMJECTURE_DEFAULT_EXECUTION_BACKEND=bubblewrap", bin, "tui")
	s.waitText(10*time.Second, "n new study")
	s.keys("n")
	s.waitText(10*time.Second, "New study", "‹ codex ›")
	s.keys("Tab")
	s.typeText(a.hyp)
	s.keys("Tab", "Tab")
	s.typeText(a.ins)
	s.keys("Tab", "Right", "Right") // agent backend: codex → claude → api
	s.waitText(5*time.Second, "‹ api ›", "Connection file")
	s.keys("Tab")
	s.typeText("m")
	s.keys("Tab") // api takes no executable: the connection file is next
	s.typeText(a.conn)
	s.keys("C-s")
	s.waitText(5*time.Second, "Review the frozen contract", "Connection file", filepath.Base(a.conn))
	s.keys("Enter")
	s.waitText(20*time.Second, "supervising")
	entries, err := os.ReadDir(ws)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one study under %s, found %v (%v)", ws, entries, err)
	}
	dir := filepath.Join(ws, entries[0].Name())
	waitFor(t, 60*time.Second, "the api study to complete", func() bool {
		snap, ok := apiStatus(t, dir)
		return ok && snap.Status == "completed"
	})
	if requests, _, badAuth := a.mock.counts(); requests == 0 || badAuth != 0 {
		t.Errorf("the mock saw %d requests, %d with a wrong key", requests, badAuth)
	}
	evs, text := apiEvents(t, dir)
	created := eventsOf(evs, "study_created")
	if len(created) != 1 || created[0].Payload["agent_backend"] != "api" || created[0].Payload["provider_config"] != a.conn {
		t.Errorf("study_created does not record the api backend and %s:\n%s", a.conn, text)
	}
	s.keys("q")
	s.waitText(10*time.Second, "studies in "+ws)
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// pauseGatedStudy starts c's study with the gated agent script wrapper,
// waits for its first turn and pauses it, so the campaign holds a paused
// study no supervisor owns.
func pauseGatedStudy(t *testing.T, c campaign, wrapper string) {
	t.Helper()
	if err := os.Chmod(wrapper, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"study", "--campaign", c.dir, "--hypothesis-file", c.hypothesis, "--instructions-file", c.instructions,
		"--backend", "command", "--executable", wrapper, "--execution-backend", "bubblewrap",
		"--wall-seconds", "600", "--turn-seconds", "300", "--batch"}
	first := start(t, args...)
	waitFor(t, 20*time.Second, "the first turn", func() bool {
		snap, err := tryStatus(t, c.dir)
		return err == nil && snap.Status == "running"
	})
	if r := sj(t, "", "pause", "--campaign", c.dir); r.code != 0 {
		t.Fatalf("pause: %s", r)
	}
	first.wait(t, 10*time.Second)
}
