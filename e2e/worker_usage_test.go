package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWorkerUsageInProcessMonitor: an experiment running on an SSH worker
// that burns CPU and holds 100 MiB shows, in the process monitor of a
// read-only UI attached to the study's background supervisor, CPU above 0
// and 100–300 MiB on its row (pid "-", "on lo"), sampled on the worker.
func TestWorkerUsageInProcessMonitor(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	root := s.workerRoot(t, "wroot")
	s.addWorker(t, "lo", s.login, root)
	s.prepare(t, "lo")
	c := newCampaign(t, "busy", "e2e-seconds: 300", "e2e-burn-mb: 100")
	reapMarker(t, c.marker)
	b := startEnv(t, s.env(), c.args(300, 120, "--worker", "lo")...)
	waitFor(t, 60*time.Second, "the experiment to run on the worker", func() bool { return len(procsWith(c.marker)) > 0 })
	scr := tuiScreenSized(t, 160, 40, append(tuiEnv(), s.env()...), bin, "tui", "--campaign", c.dir, "--read-only")
	row := waitRemoteRow(t, scr, "lo")
	if f := strings.Fields(strings.TrimLeft(row, " ›")); len(f) == 0 || f[0] != "-" {
		t.Errorf("the remote row has a pid of this host: %q", row)
	}
	scr.keys("q")
	scr.waitExit(10 * time.Second)
	stopStudy(t, s, c, b)
}

// waitRemoteRow waits until the process monitor of scr shows the row of
// an experiment running on worker with CPU > 0 and 100–300 MiB, and
// returns it.
func waitRemoteRow(t *testing.T, scr *screen, worker string) string {
	t.Helper()
	scr.waitText(20*time.Second, "RUNNING", "1 running")
	var row string
	scr.waitFor(30*time.Second, "the remote row with CPU > 0 and 100–300 MiB", func(sc string) bool {
		for _, l := range paneRows(sc, "Processes (", "Reviews") {
			if strings.Contains(l, "⟨on "+worker) {
				row = l
				cpu, mib, ok := remoteFigures(l)
				return ok && cpu > 0 && mib >= 100 && mib <= 300
			}
		}
		return false
	})
	t.Logf("the remote row: %s", row)
	return row
}

// remoteFigures reads CPU% and MiB from a process row, counting its
// columns from the right (the command has spaces): … CPU% cpu MiB mem
// ELAPSED BACKEND.
func remoteFigures(row string) (float64, float64, bool) {
	f := strings.Fields(row)
	if len(f) < 7 {
		return 0, 0, false
	}
	cpu, err1 := strconv.ParseFloat(f[len(f)-6], 64)
	mib, err2 := strconv.ParseFloat(f[len(f)-4], 64)
	return cpu, mib, err1 == nil && err2 == nil
}
