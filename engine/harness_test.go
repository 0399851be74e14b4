package engine

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// garble overwrites a file in place (same inode, same size) with bytes
// that are no SQLite data: a supervisor's open connections see it too.
func garble(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	junk := bytes.Repeat([]byte("not a database "), int(st.Size())/15+1)[:st.Size()]
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(junk, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// refuse installs a trigger that makes every write of an event of type typ fail.
func refuse(t *testing.T, c Campaign, typ string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+c.DB()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`CREATE TRIGGER refuse_` + typ + ` BEFORE INSERT ON events WHEN NEW.type = '` + typ +
		`' BEGIN SELECT RAISE(ABORT, 'injected: ` + typ + ` refused'); END`)
	if err != nil {
		t.Fatal(err)
	}
}

// TestSupervisorStopsOnFailingStore: a store that stops taking writes under
// a running supervisor ends the study within a few seconds, paused for
// the operator's attention, and every failure is in supervisor.log.
func TestSupervisorStopsOnFailingStore(t *testing.T) {
	cases := []struct {
		name    string
		before  func(t *testing.T, c Campaign)                 // before the supervisor starts
		inTurn  func(t *testing.T, c Campaign, sv *Supervisor) // during the first worker turn
		wantErr string                                         // in Run's error; "" when the pause is recorded
		wantLog string
	}{
		{name: "store closed", wantErr: "could not record its pause", wantLog: "database is closed",
			inTurn: func(t *testing.T, _ Campaign, sv *Supervisor) { _ = sv.s.Close() }},
		{name: "database garbled", wantErr: "could not record its pause", wantLog: "file is not a database",
			inTurn: func(t *testing.T, c Campaign, _ *Supervisor) {
				for _, suffix := range []string{"", "-wal", "-shm"} {
					garble(t, c.DB()+suffix)
				}
			}},
		{name: "turn start refused", wantLog: "injected: turn_started refused",
			before: func(t *testing.T, c Campaign) { refuse(t, c, "turn_started") }},
		{name: "final receipt refused", wantLog: "injected: experiment_finished refused",
			before: func(t *testing.T, c Campaign) { refuse(t, c, "experiment_finished") },
			inTurn: func(t *testing.T, c Campaign, sv *Supervisor) {
				writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
				lab := &Lab{C: c, S: sv.s, Cores: 1, MemMB: 8192}
				if _, err := lab.Call(context.Background(), "run", []byte(`{"source":"sim.py","outputs":["r.json"]}`)); err != nil {
					t.Error(err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			if tc.before != nil {
				tc.before(t, c)
			}
			var sv *Supervisor
			agent := &fakeAgent{review: approve, worker: func(int) provider.Outcome {
				if tc.inTurn != nil {
					tc.inTurn(t, c, sv)
				}
				return provider.Outcome{}
			}}
			sv, err := Open(context.Background(), c, agent, Options{Run: fakeRun, HarnessGap: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sv.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			final, err := sv.Run(ctx)
			took := time.Since(start)
			t.Logf("%s: Run returned after %v: %s, %v", tc.name, took.Round(time.Millisecond), final, err)
			if took > 5*time.Second || final != StatusPausedExternalError {
				t.Fatalf("want %s within 5 s, got %q after %v", StatusPausedExternalError, final, took)
			}
			checkRunError(t, err, tc.wantErr)
			if tc.wantErr == "" {
				checkHarnessPauseRecorded(t, c, s, tc.wantLog)
			}
			checkSupervisorLog(t, c, tc.wantLog)
		})
	}
}

func checkRunError(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("Run: %v", err)
	case want != "" && (err == nil || !strings.Contains(strings.ToLower(err.Error()), want)):
		t.Fatalf("want an error with %q, got %v", want, err)
	case want != "" && strings.ContainsAny(err.Error(), "\n\r"):
		t.Fatalf("the error is not one line: %q", err)
	}
}

func checkHarnessPauseRecorded(t *testing.T, c Campaign, s *store.Store, cause string) {
	t.Helper()
	snap, err := LoadSnapshot(context.Background(), c, s)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Provider
	if snap.Status != StatusPausedExternalError || p.ErrorCategory == nil || *p.ErrorCategory != "harness" ||
		p.Attention == nil || !strings.Contains(*p.Attention, cause) ||
		!strings.Contains(*p.Attention, "the study paused after 3 consecutive harness errors") {
		t.Fatalf("want the harness pause recorded with its cause %q, got %s %+v", cause, snap.Status, p)
	}
	if n := countEvents(t, s, "harness_error"); n != 3 {
		t.Errorf("want 3 harness_error events, got %d", n)
	}
}

func checkSupervisorLog(t *testing.T, c Campaign, want string) {
	t.Helper()
	b, err := os.ReadFile(c.SupervisorLog())
	if err != nil {
		t.Fatal(err)
	}
	var failures int
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "harness error") && strings.Contains(line, want) {
			failures++
		}
	}
	if failures < 3 {
		t.Fatalf("want at least 3 logged harness errors with %q in %s:\n%s", want, filepath.Base(c.SupervisorLog()), b)
	}
}

// TestLogFileIsBounded: the log creates its folder, and a write that would
// grow it past its bound moves it to .1 first, replacing the older one.
func TestLogFileIsBounded(t *testing.T) {
	l := &logFile{path: filepath.Join(t.TempDir(), "supervisor", "supervisor.log"), max: 100}
	entries := []string{strings.Repeat("a", 59) + "\n", strings.Repeat("b", 59) + "\n", strings.Repeat("c", 30) + "\n"}
	for _, e := range entries {
		if _, err := l.Write([]byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{l.path: entries[1] + entries[2], l.path + ".1": entries[0]} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s: want %q, got %q (%v)", filepath.Base(path), want, got, err)
		}
	}
	if _, err := l.Write([]byte(strings.Repeat("d", 50))); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(l.path + ".1"); string(got) != entries[1]+entries[2] {
		t.Errorf("the second rotation kept %q", got)
	}
}
