package tui

import (
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestStatusBarSaysWhoRunsTheStudy: the status bar names this process,
// another live one, or nobody; a finished study with no supervisor is
// never `attached`.
func TestStatusBarSaysWhoRunsTheStudy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                    string
		status                  engine.Status
		readOnly, mine, another bool
		want                    string
	}{
		{"supervising", engine.StatusRunning, false, true, false, "] supervising │"},
		{"another process", engine.StatusRunning, false, false, true, "] attached │"},
		{"read-only", engine.StatusRunning, true, false, true, "] read-only │"},
		{"completed", engine.StatusCompleted, false, false, false, "] finished │"},
		{"cancelled", engine.StatusCancelled, false, false, false, "] finished │"},
		{"paused", engine.StatusPaused, false, false, false, "] stopped │"},
		{"interrupted", engine.StatusInterrupted, false, false, false, "] stopped │"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fixture()
			f.state.Snapshot.Status, f.state.Supervising, f.state.OtherOwner = tc.status, tc.mine, tc.another
			m := openDash(t, f, tc.readOnly, 120, 30)
			if bar := lastLine(m.View()); !strings.Contains(bar, tc.want) {
				t.Errorf("want %q in the status bar: %q", tc.want, bar)
			}
		})
	}
}
