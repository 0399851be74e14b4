package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/store"
)

// intactFinishedStudy is finishedStudy, checked intact.
func intactFinishedStudy(t *testing.T) (Campaign, *store.Store) {
	t.Helper()
	c, s := finishedStudy(t)
	if f, err := Verify(context.Background(), c, s); err != nil || len(f) != 0 {
		t.Fatalf("before tampering: findings %q, err %v", f, err)
	}
	return c, s
}

// wantFinding fails unless the findings hold one containing want, or
// none when want is "".
func wantFinding(t *testing.T, f []string, err error, want string) {
	t.Helper()
	switch got := strings.Join(f, "\n"); {
	case err != nil:
		t.Fatal(err)
	case want == "" && got != "":
		t.Errorf("findings:\n%s\nwant none", got)
	case !strings.Contains(got, want):
		t.Errorf("findings:\n%s\nwant one containing %q", got, want)
	}
}

// editFile replaces every old in a campaign file with new, failing when
// there is none, and returns the line of the first.
func editFile(t *testing.T, c Campaign, name, old, new string) int {
	t.Helper()
	path := filepath.Join(c.Dir, name)
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(body, []byte(old))
	if i < 0 {
		t.Fatalf("%s holds no %q", name, old)
	}
	writeFileT(t, path, strings.ReplaceAll(string(body), old, new))
	return 1 + bytes.Count(body[:i], []byte{'\n'})
}

// TestVerifyComparesTheReports tampers with the reports of a finished
// study, and with rows they render, and checks that verify names the file
// and the first line that differs; and that what the record cannot give
// (the clock, the folder) is no finding.
func TestVerifyComparesTheReports(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tamper func(t *testing.T, c Campaign) string // the finding wanted; "" for none
	}{
		{"verdict reversed in report.json", func(t *testing.T, c Campaign) string {
			line := editFile(t, c, "report.json", `"falsified"`, `"supported"`)
			return fmt.Sprintf(`report.json differs from the record: line %d reads`, line)
		}},
		{"verdict reversed in LEDGER.md", func(t *testing.T, c Campaign) string {
			line := editFile(t, c, "LEDGER.md", "falsified", "supported")
			return fmt.Sprintf(`LEDGER.md differs from the record: line %d reads`, line)
		}},
		{"line added to LEDGER.md", func(t *testing.T, c Campaign) string {
			f, err := os.OpenFile(filepath.Join(c.Dir, "LEDGER.md"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.WriteString("root was supported after all\n")
			_ = f.Close()
			return `"root was supported after all", the record gives nothing (the end of the file)`
		}},
		{"LEDGER.md removed", func(t *testing.T, c Campaign) string {
			if err := os.Remove(filepath.Join(c.Dir, "LEDGER.md")); err != nil {
				t.Fatal(err)
			}
			return "LEDGER.md: missing"
		}},
		{"supervisor state rewritten in the store", func(t *testing.T, c Campaign) string {
			mustExec(t, rawDB(t, c), `UPDATE supervisor SET state_json = replace(state_json, '"activity":"stopped: completed"', '"activity":"stopped: cancelled"')`)
			return `report.json differs from the record: line 4 reads "\"activity\": \"stopped: completed\","`
		}},
		{"remaining seconds moved", func(t *testing.T, c Campaign) string {
			editFile(t, c, "report.json", `"remaining_seconds": 0,`, `"remaining_seconds": 17,`)
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, s := intactFinishedStudy(t)
			want := tt.tamper(t, c)
			f, err := Verify(context.Background(), c, s)
			wantFinding(t, f, err, want)
		})
	}
}

// TestVerifyPassesStudiesAsTheyAreLeft: the reports of a study as each
// path leaves it say what its store says.
func TestVerifyPassesStudiesAsTheyAreLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		make func(t *testing.T) (Campaign, *store.Store)
	}{
		{"created (paused, its first reports)", func(t *testing.T) (Campaign, *store.Store) { return newTestStudy(t, nil) }},
		{"cancelled without a supervisor", func(t *testing.T) (Campaign, *store.Store) {
			c, s := newTestStudy(t, nil)
			if _, err := Control(ctx, c, nil, Cancel); err != nil {
				t.Fatal(err)
			}
			return c, s
		}},
		{"paused without a supervisor", func(t *testing.T) (Campaign, *store.Store) {
			c, s := newTestStudy(t, nil)
			if _, err := Control(ctx, c, nil, Pause); err != nil {
				t.Fatal(err)
			}
			return c, s
		}},
		{"guidance queued without a supervisor", func(t *testing.T) (Campaign, *store.Store) {
			c, s := newTestStudy(t, nil)
			if _, err := Steer(ctx, c, "prefer n up to 50", ""); err != nil {
				t.Fatal(err)
			}
			return c, s
		}},
		{"supervisor killed after its starting report", killedAfterStart},
		{"completed, then the folder moved", func(t *testing.T) (Campaign, *store.Store) {
			c, s := finishedStudy(t)
			moved := Campaign{Dir: filepath.Join(t.TempDir(), "moved")}
			if err := os.CopyFS(moved.Dir, os.DirFS(c.Dir)); err != nil {
				t.Fatal(err)
			}
			ms, err := moved.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ms.Close() })
			_ = s
			return moved, ms
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, s := tt.make(t)
			if f, err := Verify(ctx, c, s); err != nil || len(f) != 0 {
				t.Fatalf("findings %q, err %v; want none", f, err)
			}
		})
	}
}

// killedAfterStart leaves a study as a supervisor killed right after it
// started and wrote its reports: the store says running, no one owns it.
func killedAfterStart(t *testing.T) (Campaign, *store.Store) {
	t.Helper()
	c, s := newTestStudy(t, nil)
	ctx := context.Background()
	lock, err := AcquireLock(c)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Tx(ctx, func(tx *store.Tx) error {
		st, err := getState(tx)
		if err != nil {
			return err
		}
		st.Status, st.Activity = StatusRunning, "starting"
		if err := putState(tx, st); err != nil {
			return err
		}
		return appendEvent(tx, StudyStatePayload{Status: StatusRunning, Activity: "supervisor started"})
	})
	if err == nil {
		err = WriteReports(ctx, c, s)
	}
	if rerr := lock.Release(); err == nil {
		err = rerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// TestVerifyLeavesARunningStudysReportsToItsSupervisor: while a
// supervisor owns the study, it is due to rewrite the reports, so only
// their event head is checked.
func TestVerifyLeavesARunningStudysReportsToItsSupervisor(t *testing.T) {
	t.Parallel()
	c, s := newTestStudy(t, nil)
	editFile(t, c, "LEDGER.md", "paused", "completed")
	lock, err := AcquireLock(c)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Verify(context.Background(), c, s)
	_ = lock.Release()
	if err != nil || len(f) != 0 {
		t.Fatalf("findings %q, err %v; want none while a supervisor owns the study", f, err)
	}
	if f, _ := Verify(context.Background(), c, s); len(f) == 0 {
		t.Fatal("no finding once the supervisor is gone")
	}
}

// TestDiffWriterFindsTheFirstDifference covers the comparison on its own,
// written in pieces as a bufio.Writer would.
func TestDiffWriterFindsTheFirstDifference(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, file, written, want string }{
		{"same", "a\nb\n", "a\nb\n", ""},
		{"second line differs", "a\nbx\nc\n", "a\nby\nc\n", `line 2 reads "bx", the record gives "by"`},
		{"file shorter", "a\n", "a\nb\n", `line 2 reads nothing (the end of the file), the record gives "b"`},
		{"file longer", "a\nb\n", "a\n", `line 2 reads "b", the record gives nothing (the end of the file)`},
		{"long line bounded", "x" + strings.Repeat("a", 300) + "\n", "y" + strings.Repeat("a", 300) + "\n",
			`line 1 reads "x` + strings.Repeat("a", maxShown-1) + `…", the record gives "y` + strings.Repeat("a", maxShown-1) + `…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDiffWriter([]byte(tt.file))
			for i := 0; i < len(tt.written); i += 3 {
				_, _ = d.Write([]byte(tt.written[i:min(i+3, len(tt.written))]))
			}
			if got := d.finding(); got != tt.want {
				t.Errorf("finding %q, want %q", got, tt.want)
			}
		})
	}
}
