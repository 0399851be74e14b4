package tui

import (
	"slices"
	"sync"
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
	// data names what the rows were rendered from (a snapshot's or a
	// process sample's generation, the event log's ends; nil: nothing the
	// filter may remember), and shape how (a width); live are the rows
	// whose text changes with the clock.
	data  any
	shape int
	live  []int
}

// listOf is a rowList of rows already rendered.
func listOf(rows []string) rowList {
	return rowList{n: len(rows), row: func(i int) string { return rows[i] }}
}

// picked is the rows at the given indices, in their order.
func (l rowList) picked(idx []int) rowList {
	return rowList{n: len(idx), row: func(i int) string { return l.row(idx[i]) }}
}

// dataGen numbers the snapshots and process samples every dashboard
// receives, so that a memo keyed by it never mistakes one model's data for
// another's.
var dataGen atomic.Int64

// eventsID names an event log by its length and its two ends (events
// are unique by Seq, and the log only grows or drops at its ends).
type eventsID struct {
	n           int
	first, last int64
	head        *engine.Event
}

// shownKey is what a filter's matches depend on.
type shownKey struct {
	p     pane
	data  any
	shape int
	query string
}

// shownMemo remembers the rows each filter matched, but for the live rows,
// so a frame does not re-render every row to filter them again. Copies of
// a model share it: a key holds everything the matches depend on.
type shownMemo struct {
	mu   sync.Mutex
	m    map[shownKey][]int
	rows map[shownKey][]string // rows aligned across the whole list (claims, reviews)
}

// aligned is the rows render makes from data for pane p, w cells wide,
// through the memo: a list whose columns line up over every row (claims,
// reviews) is rendered again only when its snapshot or width changes.
func (c *shownMemo) aligned(p pane, data int64, w int, render func() []string) []string {
	if c == nil || data == 0 {
		return render()
	}
	k := shownKey{p: p, data: data, shape: w}
	c.mu.Lock()
	rows, ok := c.rows[k]
	c.mu.Unlock()
	if ok {
		return rows
	}
	rows = render()
	c.mu.Lock()
	if c.rows == nil || len(c.rows) >= 16 {
		c.rows = map[shownKey][]string{}
	}
	c.rows[k] = rows
	c.mu.Unlock()
	return rows
}

// matches is the rows of l that match f, through the memo.
func (c *shownMemo) matches(p pane, l rowList, f listFilter, text func(i int) string) []int {
	if c == nil || l.data == nil {
		return f.matching(textsAt(nil, l.n, text))
	}
	k := shownKey{p: p, data: l.data, shape: l.shape, query: f.query}
	c.mu.Lock()
	static, ok := c.m[k]
	c.mu.Unlock()
	if !ok {
		static = matchingExcept(f, l.n, l.live, text)
		c.mu.Lock()
		if c.m == nil || len(c.m) >= 32 { // old snapshots' matches: drop them
			c.m = map[shownKey][]int{}
		}
		c.m[k] = static
		c.mu.Unlock()
	}
	if len(l.live) == 0 {
		return static
	}
	return mergeSorted(static, f.matching(textsAt(l.live, 0, text)), l.live)
}

// textsAt is the texts of the rows at idx (every row when idx is nil and n rows).
func textsAt(idx []int, n int, text func(i int) string) []string {
	if idx == nil {
		out := make([]string, n)
		for i := range out {
			out[i] = text(i)
		}
		return out
	}
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = text(i)
	}
	return out
}

// matchingExcept is the rows that match f, the live ones (sorted) left out.
func matchingExcept(f listFilter, n int, live []int, text func(i int) string) []int {
	out := []int{}
	for i := range n {
		if _, isLive := slices.BinarySearch(live, i); isLive {
			continue
		}
		if f.match(text(i)) {
			out = append(out, i)
		}
	}
	return out
}

// mergeSorted merges the static matches with the live rows that matched
// (positions into live), in row order.
func mergeSorted(static, livePos, live []int) []int {
	out := make([]int, 0, len(static)+len(livePos))
	k := 0
	for _, i := range static {
		for k < len(livePos) && live[livePos[k]] < i {
			out = append(out, live[livePos[k]])
			k++
		}
		out = append(out, i)
	}
	for ; k < len(livePos); k++ {
		out = append(out, live[livePos[k]])
	}
	return out
}

// expTable is what the Experiments pane derives from one snapshot.
type expTable struct {
	gen   int64            // dataGen of the snapshot it was built from
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
	t := expTable{gen: dataGen.Add(1), order: m.orderExperiments(), statusWidth: len("STATUS"),
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

// listAt is rows rendered from data in a pane w cells wide (data 0: the
// dashboard has none yet, nothing to remember).
func listAt(rows []string, data int64, w int) rowList {
	l := listOf(rows)
	if data != 0 {
		l.data, l.shape = data, w
	}
	return l
}

// eventsOf names the event log evs for the memo (nil when it is empty).
func eventsOf(evs []engine.Event) any {
	if len(evs) == 0 {
		return nil
	}
	return eventsID{n: len(evs), first: evs[0].Seq, last: evs[len(evs)-1].Seq, head: &evs[0]}
}
