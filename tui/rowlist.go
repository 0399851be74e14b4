package tui

import (
	"slices"
	"sync/atomic"

	"github.com/simjecture/simjecture/engine"
)

// A frame renders the rows it shows, not every row the dashboard holds: a
// study of thousands loads its newest engine.ViewExperiments experiments
// and maxEvents events, and a pane shows a dozen. What every row of a
// snapshot shares (the Experiments order, the STATUS column's width, the
// experiments behind each claim) is worked out once, when the snapshot
// arrives (expTable), not on every tick.

// rowList is a pane's rows, rendered on demand: n rows, row(i) the text
// of row i as the pane shows it.
type rowList struct {
	n   int
	row func(i int) string
}

// listOf is a rowList of rows already rendered.
func listOf(rows []string) rowList {
	return rowList{n: len(rows), row: func(i int) string { return rows[i] }}
}

// all renders every row (the filter reads them all).
func (l rowList) all() []string {
	out := make([]string, l.n)
	for i := range out {
		out[i] = l.row(i)
	}
	return out
}

// picked is the rows at the given indices, in their order.
func (l rowList) picked(idx []int) rowList {
	return rowList{n: len(idx), row: func(i int) string { return l.row(idx[i]) }}
}

// snapshotGen numbers the snapshots every dashboard receives, so that a
// memo keyed by it never mistakes one model's snapshot for another's.
var snapshotGen atomic.Int64

// expTable is what the Experiments pane derives from one snapshot.
type expTable struct {
	gen   int64            // snapshotGen of the snapshot it was built from
	order []engine.Receipt // experimentOrder
	// statusWidth is the STATUS column's width: its longest value.
	statusWidth int
	// live are the rows whose WALL counts up with the clock, in order.
	live []int
	// byClaim are the experiments behind each claim (claimExperimentIDs).
	byClaim map[string][]string
}

// buildExpTable derives the table of m's snapshot.
func (m dashModel) buildExpTable() expTable {
	t := expTable{gen: snapshotGen.Add(1), order: m.orderExperiments(), statusWidth: len("STATUS"),
		byClaim: map[string][]string{}}
	for i, e := range t.order {
		t.statusWidth = max(t.statusWidth, len(m.expStatus(e)))
		if e.WallSeconds == nil && m.expStatus(e) == engine.ExpRunning && e.StartedAt != nil {
			t.live = append(t.live, i)
		}
		if e.Commitment != "" {
			t.byClaim[e.Commitment] = append(t.byClaim[e.Commitment], e.ID)
		}
	}
	for _, r := range m.state.Snapshot.Reviews {
		ids := t.byClaim[r.Claim]
		for _, x := range r.Experiments {
			if !slices.Contains(ids, x) {
				ids = append(ids, x)
			}
		}
		if ids != nil {
			t.byClaim[r.Claim] = ids
		}
	}
	return t
}
