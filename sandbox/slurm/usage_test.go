package slurm

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// TestLiveUsageFromNode: while a job runs, its node's live figures (the
// experiment's tree, sampled by the node's runner) reach Spec.Usage on the
// coordinator, newer each time; none arrive once the record is in.
func TestLiveUsageFromNode(t *testing.T) {
	tc := startCluster(t, "")
	c := newTestCluster(t, tc, nil)
	// Busy for about 3 s of CPU, then done.
	j := shJob(t, "study-1/exp_usage", "end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do :; done; : > result.txt\n", time.Minute)
	var mu sync.Mutex
	var got []sandbox.Usage
	j.Spec.Usage = func(u sandbox.Usage) { mu.Lock(); got = append(got, u); mu.Unlock() }
	o, err := c.Run(context.Background(), j)
	if err != nil || o.Status != "" || o.Result.ReturnCode == nil || *o.Result.ReturnCode != 0 {
		t.Fatalf("Run = %+v (%s: %s), %v", o.Result, o.Status, o.Reason, err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d live figures: %+v", len(got), got)
	if len(got) == 0 {
		t.Fatal("no live figures reached the coordinator while the job ran")
	}
	last := got[len(got)-1]
	if last.CPUSeconds <= 0 || last.Processes < 1 || last.RSSBytes <= 0 {
		t.Errorf("last figures %+v: want CPU time, processes and memory of the running tree", last)
	}
	for i := 1; i < len(got); i++ {
		if !got[i].At.After(got[i-1].At) {
			t.Errorf("figures %d (%v) are not newer than %d (%v)", i, got[i].At, i-1, got[i-1].At)
		}
	}
}
