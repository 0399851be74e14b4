package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGarbledStoreStopsTheStudy: the command agent overwrites the study's
// store (the database and its -wal and -shm, in place, so the supervisor's
// open connections see it) during its turn. The supervisor cannot record
// anything any more; within a few seconds it stops with exit 1 and one
// line on stderr that says so, and supervisor.log holds the failures.
// (Root ignores file modes, so a read-only store would not do.)
func TestGarbledStoreStopsTheStudy(t *testing.T) {
	t.Parallel()
	s := newFaultStudy(t, "1 garble\n")
	p := start(t, s.args(120)...)
	garbleForEnclosedAgent(t, s)
	r := p.wait(t, 30*time.Second)
	took := p.exited.Sub(garbledAt(t, s))
	t.Logf("a garbled store: the study exited %v after the agent garbled it", took.Round(time.Millisecond))
	if r.code != 1 || took > 5*time.Second {
		t.Fatalf("want exit 1 within 5 s of the garbling, got exit %d after %v:\n%s", r.code, took, r)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	for _, want := range []string{"simjecture: the study's store failed to ", "file is not a database",
		"the study stopped after 3 consecutive harness errors and could not record its pause", "supervisor.log"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last line of stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	log, err := os.ReadFile(filepath.Join(s.dir, "supervisor", "supervisor.log"))
	if err != nil || strings.Count(string(log), "harness error") < 3 {
		t.Errorf("want 3 harness errors in supervisor.log (%v):\n%s", err, log)
	}
}

// garbleForEnclosedAgent garbles the store as fault_agent.py would, when
// the agent, enclosed, cannot and asks for it (garble_request).
func garbleForEnclosedAgent(t *testing.T, s faultStudy) {
	t.Helper()
	here := filepath.Dir(s.exe)
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(here, name)); return err == nil }
	waitFor(t, 30*time.Second, "the agent garbles the store or asks for it", func() bool {
		return exists("garble_request") || exists("garbled_at")
	})
	if exists("garbled_at") {
		return
	}
	db := filepath.Join(s.dir, "simjecture.db")
	for _, path := range []string{db, db + "-wal", db + "-shm"} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		junk := []byte(strings.Repeat("not a database ", int(st.Size())/15+1))[:st.Size()]
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt(junk, 0) // same file, same size: open handles see it too
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(here, "garbled_at"), strconv.FormatFloat(float64(time.Now().UnixNano())/1e9, 'f', 6, 64)+"\n")
}

// garbledAt is when the agent garbled the store, as it noted.
func garbledAt(t *testing.T, s faultStudy) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(s.exe), "garbled_at"))
	if err != nil {
		t.Fatalf("the agent did not garble the store: %v", err)
	}
	sec, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, int64(sec*1e9))
}
