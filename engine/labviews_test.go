package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestStatusSummaryPagesReceiptsNewestFirst(t *testing.T) {
	c, s := newTestStudy(t, nil)
	ids := seedExperiments(t, s, 30, 2000, ExpSucceeded, ExpFailed, ExpSucceeded)
	lab := &Lab{C: c, S: s}
	newest := func(from, n int, keep func(i int) bool) []string { // ids newest first, skipping from
		var out []string
		for i := len(ids) - 1; i >= 0; i-- {
			if keep(i) {
				out = append(out, ids[i])
			}
		}
		return out[min(from, len(out)):min(from+n, len(out))]
	}
	all := func(int) bool { return true }
	failed := func(i int) bool { return i%3 == 1 }
	for _, tc := range []struct {
		name  string
		args  StatusArgs
		want  []string
		total int
	}{
		{"default page", StatusArgs{}, newest(0, 20, all), 30},
		{"second page", StatusArgs{Limit: 20, Offset: 20}, newest(20, 20, all), 30},
		{"past the end", StatusArgs{Offset: 40}, nil, 30},
		{"small page", StatusArgs{Limit: 3, Offset: 1}, newest(1, 3, all), 30},
		{"filtered", StatusArgs{Status: ExpFailed, Limit: 4}, newest(0, 4, failed), 10},
		{"filtered, none", StatusArgs{Status: ExpQueued}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := lab.Status(context.Background(), tc.args)
			if err != nil {
				t.Fatal(err)
			}
			sum := res.Summary
			var got []string
			for _, r := range sum.Experiments {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tc.want) || sum.Page.Total != tc.total {
				t.Fatalf("page %v (total %d), want %v (total %d)", got, sum.Page.Total, tc.want, tc.total)
			}
			if sum.ExperimentCounts[ExpSucceeded] != 20 || sum.ExperimentCounts[ExpFailed] != 10 {
				t.Errorf("counts %v, want 20 succeeded and 10 failed", sum.ExperimentCounts)
			}
			body, _ := json.Marshal(res)
			if strings.Contains(string(body), "stdout_tail") || strings.Contains(string(body), "ooo") {
				t.Errorf("summary carries log tails: %.200s", body)
			}
		})
	}
}

func TestStatusWithExperimentKeepsTheTails(t *testing.T) {
	c, s := newTestStudy(t, nil)
	ids := seedExperiments(t, s, 2, 10)
	res, err := (&Lab{C: c, S: s}).Status(context.Background(), StatusArgs{Experiment: ids[0]})
	if err != nil || res.Receipt == nil || res.Receipt.StdoutTail != strings.Repeat("o", 10) {
		t.Fatalf("status of %s gave %+v, %v; want the receipt with its tail", ids[0], res.Receipt, err)
	}
}

func TestStatusSummaryReviewsAreOpenAndRecent(t *testing.T) {
	c, s := newTestStudy(t, nil)
	done := seedReviews(t, s, recentVerdicts+5, "resolved")
	open := seedReviews(t, s, 2, "queued")
	res, err := (&Lab{C: c, S: s}).Status(context.Background(), StatusArgs{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Summary.Reviews {
		got = append(got, r.ID)
	}
	want := append(slices.Clone(done[5:]), open...)
	if !slices.Equal(got, want) || res.Summary.ReviewCounts["resolved"] != len(done) {
		t.Fatalf("reviews %v (counts %v), want %v", got, res.Summary.ReviewCounts, want)
	}
}

func TestStatusRefusesBadPaging(t *testing.T) {
	c, s := newTestStudy(t, nil)
	ids := seedExperiments(t, s, 1, 0)
	lab := &Lab{C: c, S: s}
	for _, tc := range []struct {
		raw, want string
	}{
		{`{"limit":101}`, "limit must be 1 to 100"},
		{`{"limit":-1}`, "limit must be 1 to 100"},
		{`{"offset":-1}`, "offset must be 0 or more"},
		{`{"status":"done"}`, "status"},
		{`{"limit":1.5}`, "limit"},
		{fmt.Sprintf(`{"experiment":%q,"limit":2}`, ids[0]), "do not go with experiment"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			_, err := lab.Call(context.Background(), "status", []byte(tc.raw))
			checkLabError(t, err, tc.want)
		})
	}
}

func TestNoteRefusalsWriteNothing(t *testing.T) {
	c, s := newTestStudy(t, nil)
	ids := seedExperiments(t, s, 1, 0)
	lab := &Lab{C: c, S: s}
	first, err := lab.Note(context.Background(), NoteArgs{Statement: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Note(context.Background(), NoteArgs{Statement: "second", Supersedes: first.ID}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args NoteArgs
		want string
	}{
		{"unknown kind", NoteArgs{Statement: "x", Kind: "hunch"}, `unknown note kind "hunch"`},
		{"missing experiment", NoteArgs{Statement: "x", Experiments: []string{ids[0], "exp_nope"}}, `"exp_nope", which is no experiment`},
		{"too many experiments", NoteArgs{Statement: "x", Experiments: slices.Repeat(ids, 33)}, "at most 32"},
		{"supersedes nothing", NoteArgs{Statement: "x", Supersedes: 99}, "note 99, which does not exist"},
		{"supersedes a superseded note", NoteArgs{Statement: "x", Supersedes: first.ID}, "already superseded by note 2"},
		{"negative supersedes", NoteArgs{Statement: "x", Supersedes: -1}, "must be a note id"},
		{"blank", NoteArgs{Statement: "  \n "}, "not blank"},
		{"too long", NoteArgs{Statement: strings.Repeat("x", maxNoteBytes+1)}, "1 to 16384"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notes, events := countRows(t, s)
			_, err := lab.Note(context.Background(), tc.args)
			checkLabError(t, err, tc.want)
			if n, e := countRows(t, s); n != notes || e != events {
				t.Errorf("a refused note wrote: notes %d→%d, events %d→%d", notes, n, events, e)
			}
		})
	}
}

func TestNotesPagesNewestFirstByKind(t *testing.T) {
	c, s := newTestStudy(t, nil)
	ids := seedExperiments(t, s, 1, 0)
	lab := &Lab{C: c, S: s}
	ctx := context.Background()
	kinds := []NoteKind{NoteObservation, NoteQuestion, NoteNextTest, NoteQuestion, NoteInterpretation, NoteQuestion}
	for i, k := range kinds {
		if _, err := lab.Note(ctx, NoteArgs{Statement: fmt.Sprint("n", i+1), Kind: k, Experiments: ids}); err != nil {
			t.Fatal(err)
		}
	}
	fix, err := lab.Note(ctx, NoteArgs{Statement: "n2 was wrong", Kind: NoteQuestion, Supersedes: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  NotesArgs
		want  []int64
		total int
	}{
		{NotesArgs{}, []int64{7, 6, 5, 4, 3, 2, 1}, 7},
		{NotesArgs{Limit: 2, Offset: 1}, []int64{6, 5}, 7},
		{NotesArgs{Kind: NoteQuestion}, []int64{7, 6, 4, 2}, 4},
		{NotesArgs{Kind: NoteQuestion, Limit: 1, Offset: 3}, []int64{2}, 4},
		{NotesArgs{Kind: NoteImplementation}, nil, 0},
	} {
		t.Run(fmt.Sprintf("%+v", tc.args), func(t *testing.T) {
			p, err := lab.Notes(ctx, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, n := range p.Notes {
				got = append(got, n.ID)
				if want := map[bool]int64{true: fix.ID}[n.ID == 2]; n.SupersededBy != want {
					t.Errorf("note %d superseded_by %d, want %d", n.ID, n.SupersededBy, want)
				}
			}
			if !slices.Equal(got, tc.want) || p.Total != tc.total {
				t.Errorf("notes %v (total %d), want %v (total %d)", got, p.Total, tc.want, tc.total)
			}
		})
	}
	_, err = lab.Call(ctx, "notes", []byte(`{"kind":"hunch"}`))
	checkLabError(t, err, "kind")
}

// On a study of 3,000 experiments with chatty logs, lab status with no
// arguments answers in at most 64 KB, no larger than on a study of 100
// plus a page's rounding, and lab brief within its default limit.
func TestLabViewsStayBoundedAtScale(t *testing.T) {
	sizes := map[int]int{}
	for _, n := range []int{100, 3000} {
		lab := seedLabStudy(t, n)
		sizes[n] = callSize(t, lab, "status")
		if brief := callSize(t, lab, "brief"); brief > DefaultBriefBytes {
			t.Errorf("n=%d: lab brief answers %d bytes; its limit is %d", n, brief, DefaultBriefBytes)
		}
	}
	if sizes[3000] > 64<<10 {
		t.Errorf("n=3000: lab status answers %d bytes; at most %d", sizes[3000], 64<<10)
	}
	if sizes[3000] > sizes[100]+256 {
		t.Errorf("lab status grows with the study: %d bytes at 100 experiments, %d at 3,000", sizes[100], sizes[3000])
	}
}
