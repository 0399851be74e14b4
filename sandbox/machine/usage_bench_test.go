package machine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// BenchmarkStatusWithUsage is the daemon's side of one usage sample, as
// the coordinator asks for it once a second while a job runs: the runner's
// report kept in the job (setUsage) and a status request answered with it
// (the job found, its state copied and encoded). Its baseline, measured in
// the same run, is the same status answer without figures (a Slurm-less
// wait that polled would pay it too). Compare ns/op of usage to plain.
func BenchmarkStatusWithUsage(b *testing.B) {
	for _, tc := range []struct {
		name  string
		usage bool
	}{{"plain", false}, {"usage", true}} {
		b.Run(tc.name, func(b *testing.B) {
			d := &daemon{jobs: map[string]*job{}}
			j := &job{d: d, state: JobState{ID: "job_a", Status: jobRunning}}
			d.jobs["job_a"] = j
			f := frame{Op: opStatus, Body: body(jobArgs{ID: "job_a"})}
			u := sandbox.Usage{CPUSeconds: 12.5, RSSBytes: 100 << 20, Processes: 4, At: time.Now().UTC()}
			for b.Loop() {
				if tc.usage {
					j.setUsage(u)
				}
				st, err := d.status(f)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
