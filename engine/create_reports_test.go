package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreatedStudyVerifies: a study as its creation leaves it, before any
// supervisor has run (a kill right after its store was renamed into
// place), has its reports, and verify finds nothing wrong; no file of the
// creation is left beside them.
func TestCreatedStudyVerifies(t *testing.T) {
	t.Parallel()
	c, s := newTestStudy(t, nil)
	for _, name := range []string{"report.json", "LEDGER.md"} {
		if _, err := os.Stat(filepath.Join(c.Dir, name)); err != nil {
			t.Errorf("the created study has no %s: %v", name, err)
		}
	}
	findings, err := Verify(context.Background(), c, s)
	if err != nil || len(findings) != 0 {
		t.Errorf("verify of a study just created = %q, %v; want no finding", findings, err)
	}
	entries, _ := os.ReadDir(c.Dir)
	for _, e := range entries {
		if name := e.Name(); name == creationMarker || strings.HasPrefix(name, tempStoreName) || strings.HasPrefix(name, firstReportPrefix) {
			t.Errorf("the creation left %s", e.Name())
		}
	}
}
