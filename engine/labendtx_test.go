package engine

import (
	"context"
	"errors"
	"fmt"
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
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	covered := endBetweenChecks(t, lab, minimalDispatchSteps())
	_, _, slab := newScientificStudy(t, "structured")
	covered = append(covered, endBetweenChecks(t, slab, ledgerDispatchSteps(t, slab))...)
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
