package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox/machine"
)

// TestLabRunResourcesBoundByPool: what one experiment may ask for is what
// the largest machine of the study's pool has, not this host's figures:
// a worker with 64 cores takes a request for 64 from a 2-core host (and
// refuses 65, naming 64); a pool of one 1-core worker refuses a request
// for 2 that this host could hold, since admission would wait for it
// forever; a request must fit one machine whole (the most cores and the
// most memory may be on different machines), and a default memory above
// what a machine with the cores asked for has is cut to it.
func TestLabRunResourcesBoundByPool(t *testing.T) {
	t.Setenv(machine.EnvConfig, t.TempDir())
	big := savedWorker(t, "big", 22)
	big.CPUs, big.MemoryMB = 64, 256<<10
	small := savedWorker(t, "small", 23)
	small.CPUs, small.MemoryMB = 1, 512
	wide := savedWorker(t, "wide", 24)
	wide.CPUs, wide.MemoryMB = 64, 512
	deep := savedWorker(t, "deep", 25)
	deep.CPUs, deep.MemoryMB = 1, 256<<10
	dir, _ := machine.ConfigDir()
	for _, p := range []machine.Profile{big, small, wide, deep} {
		if err := machine.NewRegistry(dir).Save(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		pool     []string
		resource string
		accepted bool
		refusal  string
	}{
		{[]string{"big"}, `"cpus":64`, true, ""},
		{[]string{"big"}, `"cpus":65`, false, "resources.cpus must be 1 to 64"},
		{[]string{"small", "local"}, `"cpus":2`, true, ""},
		{[]string{"small"}, `"cpus":2`, false, "resources.cpus must be 1 to 1"},
		{[]string{"small"}, `"cpus":1`, true, ""}, // the default 4096 MB is cut to its 512
		{[]string{"small"}, `"memory_mb":1024`, false, "resources.memory_mb must be 16 to 512"},
		{[]string{"big"}, `"memory_mb":100000`, true, ""},
		// Most cores on one machine, most memory on another: a request
		// must fit one of them whole.
		{[]string{"wide", "deep"}, `"cpus":64,"memory_mb":100000`, false, "fit no one machine"},
		{[]string{"wide", "deep"}, `"cpus":64`, true, ""},                   // the default memory is cut to wide's 512
		{[]string{"wide", "deep"}, `"cpus":1,"memory_mb":100000`, true, ""}, // deep holds it
		{[]string{"wide", "deep"}, `"cpus":2,"memory_mb":1024`, false, "fit no one machine"},
	} {
		t.Run(strings.Join(tc.pool, "+")+" "+tc.resource, func(t *testing.T) {
			c, s := newTestStudy(t, func(r *Request) { r.Workers = tc.pool })
			writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
			_ = s.Close()
			lab, err := OpenLab(context.Background(), c, 2, 8192)
			if err != nil {
				t.Fatal(err)
			}
			defer lab.Close()
			_, err = lab.Call(context.Background(), "run", []byte(`{"source":"sim.py","outputs":["o"],"resources":{`+tc.resource+`}}`))
			switch {
			case tc.accepted && err != nil:
				t.Errorf("refused: %v", err)
			case !tc.accepted && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
				t.Errorf("= %v, want a refusal saying %q", err, tc.refusal)
			}
		})
	}
}
