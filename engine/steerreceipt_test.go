package engine

import (
	"context"
	"slices"
	"testing"
)

// Each new receipt lists the guidance that existed when it was submitted;
// a resubmission returns the receipt as first recorded.
func TestReceiptListsGuidanceAtSubmission(t *testing.T) {
	c, s := newTestStudy(t, nil)
	ctx := context.Background()
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	run := func(args string) Receipt {
		t.Helper()
		res, err := lab.Call(ctx, "run", []byte(args))
		if err != nil {
			t.Fatal(err)
		}
		return res.(Receipt)
	}
	none := run(`{"source":"sim.py","outputs":["o"],"key":"a"}`)
	if none.Guidance == nil || len(none.Guidance) != 0 {
		t.Fatalf("before any guidance: guidance %#v; want []", none.Guidance)
	}
	g1, err := Steer(ctx, c, "prefer n up to 50", "")
	if err != nil {
		t.Fatal(err)
	}
	g2, err := Steer(ctx, c, "log the residual", "")
	if err != nil {
		t.Fatal(err)
	}
	two := run(`{"source":"sim.py","outputs":["o"],"key":"b"}`)
	if want := []string{g1.ID, g2.ID}; !slices.Equal(two.Guidance, want) {
		t.Fatalf("guidance %v; want %v", two.Guidance, want)
	}
	if _, err := Steer(ctx, c, "a third", ""); err != nil {
		t.Fatal(err)
	}
	if again := run(`{"source":"sim.py","outputs":["o"],"key":"b"}`); len(again.Guidance) != 2 {
		t.Fatalf("the same request now lists %v; want the ids recorded at submission", again.Guidance)
	}
	snap, err := LoadSnapshot(ctx, c, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range snap.Experiments {
		if r.ID == two.ID && !slices.Equal(r.Guidance, two.Guidance) {
			t.Fatalf("status shows guidance %v; want %v", r.Guidance, two.Guidance)
		}
	}
}
