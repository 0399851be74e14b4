package sandbox

import (
	"os"
	"testing"
)

// TestReserveThreads: the threads started ahead of need stay (idle), and a
// second reserve reuses them instead of starting more.
func TestReserveThreads(t *testing.T) {
	reserveThreads(threadReserve)
	first, err := os.ReadDir("/proc/self/task")
	must(t, err)
	if len(first) < threadReserve {
		t.Fatalf("%d threads after reserving %d", len(first), threadReserve)
	}
	reserveThreads(threadReserve)
	second, err := os.ReadDir("/proc/self/task")
	must(t, err)
	if len(second) > len(first)+2 {
		t.Errorf("threads grew from %d to %d: the reserve was not reused", len(first), len(second))
	}
}
