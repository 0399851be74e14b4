package e2e

import (
	"testing"
	"time"

	"github.com/simjecture/simjecture/e2e/slurmfix"
)

// TestSlurmUsageInProcessMonitor: an experiment running as a Slurm job
// that burns CPU and holds 100 MiB shows, in the process monitor of a
// read-only UI attached to the study, CPU above 0 and 100–300 MiB on its
// row ("on hpc"), sampled on the node and read from the job's folder.
func TestSlurmUsageInProcessMonitor(t *testing.T) {
	c := slurmfix.Start(t, slurmfix.Options{})
	envv := addSlurmWorker(t, c)
	camp := newCampaign(t, "busy", "e2e-seconds: 300", "e2e-burn-mb: 100")
	reapMarker(t, camp.marker)
	b := startWith(t, envv, camp.args(300, 120, "--worker", "hpc")...)
	waitFor(t, 60*time.Second, "the experiment to run as a job", func() bool { return len(procsWith(camp.marker)) > 0 })
	scr := tuiScreenSized(t, 160, 40, append(tuiEnv(), envv...), bin, "tui", "--campaign", camp.dir, "--read-only")
	waitRemoteRow(t, scr, "hpc")
	scr.keys("q")
	scr.waitExit(10 * time.Second)
	if r := runWith(t, envv, time.Minute, "cancel", "--campaign", camp.dir); r.code != 0 {
		t.Fatalf("cancel: %s", r)
	}
	b.wait(t, 60*time.Second)
	waitFor(t, 30*time.Second, "no experiment process left", func() bool { return len(procsWith(camp.marker)) == 0 })
}
