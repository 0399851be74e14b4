package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/store"
)

// TestWritingCallsCheckTheEndInTheirTransaction: every row of the lab-call
// table marked Writes, made with arguments it takes, on a study that ends
// in the instant between Lab.Call's early check and the handler (the
// afterCheck seam: what a supervisor serving the call sees when its study
// completes meanwhile), is refused with the very one-line error the early
// check gives and appends nothing after the end; reopened, the study takes
// the same call, so the refusal came from its end, not from the arguments.
func TestWritingCallsCheckTheEndInTheirTransaction(t *testing.T) {
	covered := dispatchAll(t, func(lab *Lab, steps []dispatchStep) []int { return endBetweenChecks(t, lab, steps) })
	for i, row := range labCalls {
		if row.Writes && !slices.Contains(covered, i) {
			t.Errorf("%s#%d (roles %v) writes but no step made it: add one to the dispatch steps", row.Name, i, row.Roles)
		}
	}
}

// endBetweenChecks runs steps on lab's study; before each step whose row
// writes, it makes the same call once with the study ending between the
// two checks. It returns the table indexes of the writing rows it made.
func endBetweenChecks(t *testing.T, lab *Lab, steps []dispatchStep) []int {
	t.Helper()
	ctx := context.Background()
	var rows []int
	for _, st := range steps {
		role, _, err := lab.callRole(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(labCalls, func(c CallSpec) bool { return c.Name == st.call && slices.Contains(c.Roles, role) })
		if i < 0 {
			t.Fatalf("no row of %s for the %s", st.call, role)
		}
		args := st.args()
		if labCalls[i].Writes {
			rows = append(rows, i)
			refusedAfterTheEnd(t, lab, st.call, args)
		}
		got, err := lab.Call(ctx, st.call, []byte(args))
		if err != nil {
			t.Fatalf("%s on the reopened study: %v", st.call, err)
		}
		st.check(t, got)
	}
	return rows
}

// refusedAfterTheEnd makes call with the study completing after the early
// check, compares the refusal with the early check's own, and reopens the
// study.
func refusedAfterTheEnd(t *testing.T, lab *Lab, call, args string) {
	t.Helper()
	ctx := context.Background()
	var endSeq int64
	lab.afterCheck = func() {
		setStatus(t, lab.C, lab.S, StatusCompleted)
		endSeq = lastEvent(t, lab.S).Seq
	}
	_, late := lab.Call(ctx, call, []byte(args))
	lab.afterCheck = nil
	if endSeq == 0 {
		t.Fatalf("%s: the seam never ran", call)
	}
	if after := lastEvent(t, lab.S).Seq; after != endSeq {
		t.Errorf("%s appended events %d..%d after the study completed", call, endSeq+1, after)
	}
	_, early := lab.Call(ctx, call, []byte(args))
	want := fmt.Sprintf("lab %s: study is completed; it takes no new work", call)
	for what, err := range map[string]error{"inside its transaction": late, "before its arguments": early} {
		if !errors.Is(err, ErrLab) || err.Error() != want+": "+ErrLab.Error() || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s refused %s: %v; want the one-line lab error %q", call, what, err, want)
		}
	}
	setStatus(t, lab.C, lab.S, StatusRunning)
}

// TestLabWriteRefusesAnEndedStudy: Lab.write, the one write transaction of
// the lab calls, runs nothing of its own on an ended study.
func TestLabWriteRefusesAnEndedStudy(t *testing.T) {
	_, s, _, _ := endedStudy(t, StatusCancelled)
	lab := &Lab{S: s}
	ran := false
	err := lab.write(context.Background(), func(*store.Tx) error { ran = true; return nil })
	var ended endedStudyError
	if !errors.As(err, &ended) || ran {
		t.Fatalf("write on a cancelled study: ran=%v err=%v; want an endedStudyError before fn", ran, err)
	}
}

// TestControlOfAnEndedStudyThroughLabSocket: a pause or cancel that
// reaches a live supervisor's socket in the instant after its study ended
// (the supervisor still serves it) is refused by the supervisor as it is
// with no supervisor: the same EndedError, no event, no control row, no
// rewrite of report.json; straight to the socket and through Control, as
// `simjecture pause|cancel` sends it.
func TestControlOfAnEndedStudyThroughLabSocket(t *testing.T) {
	for _, cmd := range []Command{Pause, Cancel} {
		t.Run(string(cmd), func(t *testing.T) {
			c, s, _, _ := endedStudy(t, StatusCompleted)
			serveTestLab(t, c, s)
			before, err := os.Stat(filepath.Join(c.Dir, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			head := lastEvent(t, s).Seq
			ctx := context.Background()
			conn, err := dialLab(c)
			if err != nil {
				t.Fatalf("no supervisor answers: %v", err)
			}
			err = (newLabClient(c, conn)).control(ctx, c, string(cmd))
			_ = conn.Close()
			wantEnded(t, c, StatusCompleted, "the supervisor's answer to "+string(cmd), "", err)
			got, err := Control(ctx, c, nil, cmd)
			wantEnded(t, c, StatusCompleted, fmt.Sprintf("Control(%s)", cmd), got, err)
			if after := lastEvent(t, s).Seq; after != head {
				t.Errorf("%s appended events %d..%d after the study completed", cmd, head+1, after)
			}
			var row string
			if err := s.Read(ctx, func(tx *store.Tx) (err error) { row, err = tx.GetControl(); return err }); err != nil || row != "" {
				t.Errorf("control row = %q (%v); want none", row, err)
			}
			if after, err := os.Stat(filepath.Join(c.Dir, "report.json")); err != nil || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("%s rewrote report.json (%v)", cmd, err)
			}
		})
	}
}
