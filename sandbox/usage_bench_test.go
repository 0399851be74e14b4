package sandbox

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// BenchmarkUsageReport is what a live usage report adds to a run, once a
// second (UsageEvery): the watchdog's reply on the runner's wire and its
// decoding on the host. Its baseline, measured in the same run, is one
// read of /proc/PID/stat, of which the watchdog's walk of a tree makes one
// per process 20 times a second anyway; the report reads nothing of /proc.
// Compare ns/op of report to stat.
func BenchmarkUsageReport(b *testing.B) {
	b.Run("stat", func(b *testing.B) {
		pid := os.Getpid()
		for b.Loop() {
			if _, err := readStat(pid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("report", func(b *testing.B) {
		var reps bytes.Buffer
		rw, rr := newReplyWriter(&reps), newReplyReader(&reps)
		u := Usage{CPUSeconds: 12.5, RSSBytes: 100 << 20, Processes: 4, At: time.Now().UTC()}
		for b.Loop() {
			_ = rw.write(runnerReply{ID: 7, Live: &u})
			back, err := rr.read()
			if err != nil || back.Live == nil || back.Live.RSSBytes != u.RSSBytes {
				b.Fatal("bad round trip", err)
			}
		}
	})
}
