package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// briefStudy records a study whose brief overflows every bound: 40
// experiments, 20 resolved and 3 open reviews, 15 claims and 30 notes.
func briefStudy(t *testing.T) (*Lab, []string, []string) {
	t.Helper()
	c, s := newTestStudy(t, nil)
	exps := seedExperiments(t, s, 40, 2000, ExpSucceeded, ExpFailed)
	verdicts := seedReviews(t, s, 20, "resolved")
	seedReviews(t, s, 3, "queued")
	lab := &Lab{C: c, S: s}
	ctx := context.Background()
	for i := range 15 {
		if _, err := lab.Commit(ctx, CommitArgs{Statement: fmt.Sprintf("repair %d: %s", i, strings.Repeat("s", 400))}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		kind := NoteKinds[i%len(NoteKinds)]
		if _, err := lab.Note(ctx, NoteArgs{Statement: strings.Repeat("n", 700), Kind: kind, Experiments: exps[:3]}); err != nil {
			t.Fatal(err)
		}
	}
	return lab, exps, verdicts
}

func TestBriefFitsEvictingInOrderAndKeepsTheAnchors(t *testing.T) {
	lab, exps, verdicts := briefStudy(t)
	parts := briefEviction(&Brief{})
	for _, max := range []int{MinBriefBytes, 3000, 4096, PromptBriefBytes, 9000, DefaultBriefBytes, MaxBriefBytes} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			b, err := lab.Brief(context.Background(), BriefArgs{MaxBytes: max})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(b)
			if len(body) > max {
				t.Fatalf("brief is %d bytes, over %d", len(body), max)
			}
			if b.LatestExperiment == nil || b.LatestExperiment.ID != exps[len(exps)-1] ||
				b.LatestVerdict == nil || b.LatestVerdict.ID != verdicts[len(verdicts)-1] {
				t.Fatalf("anchors %+v / %+v, want %s and %s", b.LatestExperiment, b.LatestVerdict, exps[len(exps)-1], verdicts[len(verdicts)-1])
			}
			lens := briefEviction(&b)
			for i, p := range parts {
				if b.Omitted[p.name] == 0 {
					continue
				}
				for _, earlier := range lens[:i] {
					if n := earlier.len(); n > earlier.floor {
						t.Errorf("%s lost entries while %s still has %d (floor %d)", p.name, earlier.name, n, earlier.floor)
					}
				}
			}
		})
	}
}

func TestBriefSectionsAtTheDefaultSize(t *testing.T) {
	lab, _, _ := briefStudy(t)
	b, err := lab.Brief(context.Background(), BriefArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Omitted["notes"] == 0 || len(b.ActiveExperiments) != 0 || len(b.OpenReviews) != 3 {
		t.Errorf("omitted %v, %d active, %d open reviews; want notes evicted first, 0 active, 3 open", b.Omitted, len(b.ActiveExperiments), len(b.OpenReviews))
	}
	for i, n := range b.Notes { // next_test first, then question, newest first within each
		if i > 0 && rankOf(n.Kind) < rankOf(b.Notes[i-1].Kind) || i > 0 && rankOf(n.Kind) == rankOf(b.Notes[i-1].Kind) && n.ID > b.Notes[i-1].ID {
			t.Errorf("note %d (%s) after note %d (%s)", n.ID, n.Kind, b.Notes[i-1].ID, b.Notes[i-1].Kind)
		}
		if len(n.Statement) > briefNote {
			t.Errorf("note %d statement is %d bytes, over %d", n.ID, len(n.Statement), briefNote)
		}
	}
}

func rankOf(k NoteKind) int {
	switch k {
	case NoteNextTest:
		return 0
	case NoteQuestion:
		return 1
	}
	return 2
}

func TestBriefDropsSupersededNotes(t *testing.T) {
	c, s := newTestStudy(t, nil)
	lab := &Lab{C: c, S: s}
	ctx := context.Background()
	old, err := lab.Note(ctx, NoteArgs{Statement: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Note(ctx, NoteArgs{Statement: "new", Supersedes: old.ID}); err != nil {
		t.Fatal(err)
	}
	b, err := lab.Brief(ctx, BriefArgs{})
	if err != nil || len(b.Notes) != 1 || b.Notes[0].Statement != "new" || b.LatestExperiment != nil {
		t.Fatalf("brief notes %+v (latest experiment %v), %v; want only the new note", b.Notes, b.LatestExperiment, err)
	}
}

func TestBriefRefusesBadSizes(t *testing.T) {
	c, s := newTestStudy(t, nil)
	lab := &Lab{C: c, S: s}
	for _, n := range []int{1, MinBriefBytes - 1, MaxBriefBytes + 1, -5} {
		_, err := lab.Call(context.Background(), "brief", fmt.Appendf(nil, `{"max_bytes":%d}`, n))
		checkLabError(t, err, "max_bytes must be 2048 to 64000")
	}
}

func TestWorkerPromptCarriesABoundedBrief(t *testing.T) {
	lab, exps, _ := briefStudy(t)
	sv := &Supervisor{s: lab.S}
	prompt, _, err := sv.workerPrompt(context.Background(), SupervisorState{Turn: 3, WorkerCursor: "thread", LastPromptSeq: 1 << 40},
		turnPlan{role: RoleWorker, cursor: "thread"})
	if err != nil {
		t.Fatal(err)
	}
	_, brief, ok := strings.Cut(prompt, "# Current research state")
	_, brief, _ = strings.Cut(brief, "\n")
	brief = strings.TrimSpace(brief)
	var b Brief
	if !ok || json.Unmarshal([]byte(brief), &b) != nil || len(brief) > PromptBriefBytes || b.LatestExperiment.ID != exps[len(exps)-1] {
		t.Fatalf("prompt brief is %d bytes (max %d), latest %v:\n%.300s", len(brief), PromptBriefBytes, b.LatestExperiment, prompt)
	}
}
