package engine

import (
	"context"
	"fmt"
	"testing"
)

// TestViewSnapshotWindow checks what a display reads of a study: the
// newest experiments only, with the counts of all, and no notes; the full
// snapshot (status --json) still has every experiment.
func TestViewSnapshotWindow(t *testing.T) {
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 1 << 20}
	ctx := context.Background()
	const n, window = 12, 5
	var ids []string
	for i := range n {
		got, err := lab.Call(ctx, "run", []byte(fmt.Sprintf(`{"source":"sim.py","outputs":["r.json"],"key":"%d"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got.(Receipt).ID)
	}
	if _, err := lab.Call(ctx, "note", []byte(`{"statement":"a note"}`)); err != nil {
		t.Fatal(err)
	}
	snap, err := loadSnapshot(ctx, c, s, window)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Experiments) != window || snap.Experiments[0].ID != ids[n-window] || snap.Experiments[window-1].ID != ids[n-1] {
		t.Errorf("window: %d experiments, first %s", len(snap.Experiments), snap.Experiments[0].ID)
	}
	if snap.ExperimentCounts[ExpQueued] != n || len(snap.Notes) != 0 || len(snap.Claims) == 0 {
		t.Errorf("counts %v, notes %d, claims %d", snap.ExperimentCounts, len(snap.Notes), len(snap.Claims))
	}
	if snap.Experiments[0].ArtifactDir == "" {
		t.Error("receipts of the window are not placed in the campaign")
	}
	full, err := (&View{c: c, s: s}).Snapshot(ctx) // what status --json prints
	if err != nil || len(full.Experiments) != n || len(full.Notes) != 1 || full.ExperimentCounts[ExpQueued] != n {
		t.Errorf("full: %d experiments, %d notes, %v", len(full.Experiments), len(full.Notes), err)
	}
}
