package e2e

import (
	"testing"
	"time"
)

// TestKilledSupervisorLeavesNoRunningReceipt kills the supervisor with
// SIGKILL while an experiment runs and then stops the study without a
// supervisor (cancel, pause) or resumes it: status never shows the killed
// experiment running again, no process of it is left, and verify passes.
func TestKilledSupervisorLeavesNoRunningReceipt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cmd         string
		study, recp string // the study's status and the killed receipt's after cmd
	}{
		{"cancel", "cancelled", "cancelled"},
		{"pause", "paused", "interrupted"},
		{"resume", "cancelled", "interrupted"}, // the resumed study is cancelled below
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			c := newCampaign(t, "busy", "e2e-seconds: 30")
			reapMarker(t, c.marker)
			sup := start(t, c.args(300, 120)...)
			killed := waitRunning(t, c, sup, "")
			if err := sup.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			sup.wait(t, 5*time.Second)
			runOffline(t, c, tc.cmd, killed.ID)
			snap := status(t, c.dir)
			if snap.Status != tc.study {
				t.Errorf("after kill -9 and %s the study is %q, want %q", tc.cmd, snap.Status, tc.study)
			}
			if e, _ := snap.experiment(killed.ID); e.Status != tc.recp {
				t.Errorf("the experiment running at the kill is %q after %s, want %q", e.Status, tc.cmd, tc.recp)
			}
			if run := snap.withStatus("running"); len(run) > 0 {
				t.Errorf("after kill -9 and %s, receipts say running: %+v", tc.cmd, run)
			}
			waitGone(t, c.marker, 2*time.Second, "after "+tc.cmd)
			if r := sj(t, "", "verify", "--campaign", c.dir); r.code != 0 {
				t.Errorf("verify after kill -9 and %s: want exit 0, got %s", tc.cmd, r)
			}
		})
	}
}

// runOffline runs cmd on the study no supervisor runs. A resume goes on
// until the supervisor runs a new experiment, and is then cancelled.
func runOffline(t *testing.T, c campaign, cmd, killed string) {
	t.Helper()
	if cmd != "resume" {
		if r := sj(t, "", cmd, "--campaign", c.dir); r.code != 0 {
			t.Fatalf("%s after kill -9: want exit 0, got %s", cmd, r)
		}
		return
	}
	sup := start(t, "resume", "--campaign", c.dir, "--batch")
	waitRunning(t, c, sup, killed)
	if r := sj(t, "", "cancel", "--campaign", c.dir); r.code != 0 {
		t.Fatalf("cancel of the resumed study: want exit 0, got %s", r)
	}
	if r := sup.wait(t, 10*time.Second); r.code != 0 {
		t.Fatalf("resumed study: want exit 0, got %s", r)
	}
}
