package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/store"
)

// storedStatuses are the statuses a study's state may hold.
var storedStatuses = []Status{StatusRunning, StatusPaused, StatusCancelled, StatusBudgetExhausted,
	StatusCompleted, StatusPausedExternalError}

// setStatus moves the study to status as the supervisor would: state,
// study_state event, reports.
func setStatus(t *testing.T, c Campaign, s *store.Store, status Status) {
	t.Helper()
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *store.Tx) error {
		st, err := getState(tx)
		if err != nil {
			return err
		}
		st.Status, st.Activity = status, "stopped: "+string(status)
		if err := putState(tx, st); err != nil {
			return err
		}
		return appendEvent(tx, StudyStatePayload{Status: status, Activity: "set by the test"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteReports(ctx, c, s); err != nil {
		t.Fatal(err)
	}
}

// endedStudy is a minimal study with one queued experiment and one queued
// review (what the read calls can name), then moved to status.
func endedStudy(t *testing.T, status Status) (c Campaign, s *store.Store, exp, rev string) {
	t.Helper()
	c, s = newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	ctx := context.Background()
	r, err := lab.Run(ctx, RunArgs{Source: "sim.py", Outputs: []string{"o.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	rv, err := lab.Review(ctx, ReviewArgs{Disposition: "falsified", Conclusion: "it fails", Experiments: []string{r.ID}})
	if err != nil {
		t.Fatal(err)
	}
	setStatus(t, c, s, status)
	return c, s, r.ID, rv.ID
}

// readCallArgs are the arguments each read-only row answers with; a new
// read-only row needs its line here.
func readCallArgs(exp, rev string) map[string]string {
	return map[string]string{
		"status":        fmt.Sprintf(`{"experiment":%q}`, exp),
		"notes":         `{}`,
		"brief":         `{}`,
		"review_status": fmt.Sprintf(`{"review":%q}`, rev),
	}
}

// TestWritingCallsRefusedOnAnEndedStudy: on a study that has ended (every
// terminal status) or a bundled record, every row of the lab-call table
// that writes the record is refused with a lab error, and nothing is
// appended to the event log; every read-only row answers, and appends
// nothing either (a row that writes but is not marked Writes fails here).
func TestWritingCallsRefusedOnAnEndedStudy(t *testing.T) {
	type endCase struct {
		name, want string
		end        func(*testing.T) (Campaign, *store.Store, string, string)
	}
	var cases []endCase
	for _, st := range storedStatuses {
		if terminal(st) {
			cases = append(cases, endCase{string(st), "study is " + string(st) + "; it takes no new work",
				func(t *testing.T) (Campaign, *store.Store, string, string) { return endedStudy(t, st) }})
		}
	}
	cases = append(cases, endCase{"bundled record", "bundled record of a finished demo study; it takes no new work",
		func(t *testing.T) (Campaign, *store.Store, string, string) {
			c, s, exp, rev := endedStudy(t, StatusPaused)
			if err := os.WriteFile(filepath.Join(c.Dir, RecordMarker), []byte(recordMarkerText), 0o644); err != nil {
				t.Fatal(err)
			}
			return c, s, exp, rev
		}})
	if len(cases) < 4 {
		t.Fatalf("only %d cases: the terminal statuses are missing", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s, exp, rev := tc.end(t)
			reads, writes := readCallArgs(exp, rev), workerWriteArgs(exp)
			for i, row := range labCalls {
				lab := &Lab{C: c, S: s, role: row.Roles[0]}
				args, ok := reads[row.Name]
				if row.Writes {
					args, ok = writes[row.Name], true
					if lab.role != RoleWorker || args == "" {
						args = `{}` // refused before its arguments are read
					}
				}
				if !ok {
					t.Errorf("%s is neither Writes nor listed in readCallArgs: mark it or add its read arguments", row.Name)
					continue
				}
				checkEndedRow(t, lab, fmt.Sprintf("%s#%d", row.Name, i), row.Writes, args, tc.want)
			}
		})
	}
}

// workerWriteArgs are valid arguments of minimal's writing calls, so the
// refusal is seen to come from the study's end, not from the arguments.
func workerWriteArgs(exp string) map[string]string {
	return map[string]string{
		"run":    `{"source":"sim.py","outputs":["other.txt"]}`,
		"cancel": fmt.Sprintf(`{"experiment":%q}`, exp),
		"commit": `{"statement":"a repair"}`,
		"review": fmt.Sprintf(`{"disposition":"falsified","conclusion":"it fails again","experiments":[%q]}`, exp),
		"note":   `{"statement":"a note for test","kind":"observation"}`,
	}
}

func checkEndedRow(t *testing.T, lab *Lab, where string, writes bool, args, want string) {
	t.Helper()
	before := lastEvent(t, lab.S).Seq
	_, err := lab.Call(context.Background(), strings.Split(where, "#")[0], []byte(args))
	switch {
	case writes && (!errors.Is(err, ErrLab) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n")):
		t.Errorf("%s (role %s) = %v; want the one-line lab error %q", where, lab.role, err, want)
	case !writes && err != nil:
		t.Errorf("%s (role %s), read-only, = %v; want an answer", where, lab.role, err)
	}
	if after := lastEvent(t, lab.S).Seq; after != before {
		t.Errorf("%s appended events %d..%d on an ended study", where, before+1, after)
	}
}

// TestWritingCallsAcceptedWhileTheStudyIsOpen: the refusal is for ended
// studies only; a note is taken in every status that may resume.
func TestWritingCallsAcceptedWhileTheStudyIsOpen(t *testing.T) {
	for _, st := range storedStatuses {
		if terminal(st) {
			continue
		}
		t.Run(string(st), func(t *testing.T) {
			c, s, _, _ := endedStudy(t, st)
			lab := &Lab{C: c, S: s}
			if _, err := lab.Call(context.Background(), "note", []byte(`{"statement":"still open"}`)); err != nil {
				t.Fatalf("note on a %s study = %v; want it taken", st, err)
			}
		})
	}
}

// TestEndedStudyHasNoTimeLeft: the snapshot and the summary of a study
// count the deadline down only while it may resume; once ended,
// remaining_seconds is 0 whatever the deadline says.
func TestEndedStudyHasNoTimeLeft(t *testing.T) {
	for _, st := range storedStatuses {
		t.Run(string(st), func(t *testing.T) {
			c, _, _, _ := endedStudy(t, st)
			v, err := OpenView(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			snap, err := v.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sum, err := v.Summary(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !snap.Deadline.After(time.Now()) {
				t.Fatalf("deadline %s has passed: the case shows nothing", snap.Deadline)
			}
			ended := terminal(st)
			for what, got := range map[string]int64{"snapshot": snap.RemainingSeconds, "summary": sum.RemainingSeconds} {
				if ended && got != 0 || !ended && got <= 0 {
					t.Errorf("%s of a %s study: remaining_seconds %d; want 0 only when ended", what, st, got)
				}
			}
		})
	}
}

// TestControlOfAnEndedStudyChangesNothing: pause or cancel of a study that
// has ended says so with an EndedError and writes nothing: no event, no
// report rewrite.
func TestControlOfAnEndedStudyChangesNothing(t *testing.T) {
	for _, st := range storedStatuses {
		if !terminal(st) {
			continue
		}
		for _, cmd := range []Command{Pause, Cancel} {
			t.Run(string(st)+"/"+string(cmd), func(t *testing.T) {
				c, s, _, _ := endedStudy(t, st)
				report := filepath.Join(c.Dir, "report.json")
				before, err := os.Stat(report)
				if err != nil {
					t.Fatal(err)
				}
				head := lastEvent(t, s).Seq
				got, err := Control(context.Background(), c, nil, cmd)
				wantEnded(t, c, st, fmt.Sprintf("Control(%s)", cmd), got, err)
				if after := lastEvent(t, s).Seq; after != head {
					t.Errorf("Control(%s) appended events %d..%d", cmd, head+1, after)
				}
				if after, err := os.Stat(report); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
					t.Errorf("Control(%s) rewrote report.json (%v)", cmd, err)
				}
			})
		}
	}
}

// wantEnded checks that a pause or cancel of c, ended in st, was refused
// with the EndedError `simjecture pause|cancel` prints.
func wantEnded(t *testing.T, c Campaign, st Status, what string, got Status, err error) {
	t.Helper()
	var ended *EndedError
	want := fmt.Sprintf("study %s has already ended (%s)", c.Dir, st)
	if !errors.As(err, &ended) || ended.Status != st || err.Error() != want || got != "" {
		t.Fatalf("%s = %q, %v; want %q", what, got, err, want)
	}
}
