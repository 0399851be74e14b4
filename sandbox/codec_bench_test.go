package sandbox

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkRequestCodec is one start request's encoding on the host and
// decoding in the runner and one reply's way back, as the runner's wire
// does it (gob streams, wire.go) and as JSON lines (the wire before),
// for a process-cooperative and a Bubblewrap-sized command line.
func BenchmarkRequestCodec(b *testing.B) {
	for _, tc := range []struct {
		name string
		argv int
	}{{"process", 1}, {"bubblewrap", 90}} {
		cfg := codecConfig(tc.argv)
		code := 0
		rep := runnerReply{ID: 1, Report: helperReport{ExitCode: &code, PeakRSS: 1 << 20, Samples: 1, WallSeconds: 0.001,
			Containment: "sampled-watchdog"}}
		b.Run(tc.name+"/json", func(b *testing.B) {
			for b.Loop() {
				js, _ := json.Marshal(runnerRequest{Op: "start", ID: 1, Config: &cfg})
				var req runnerRequest
				_ = json.Unmarshal(js, &req)
				out, _ := json.Marshal(rep)
				var back runnerReply
				_ = json.Unmarshal(out, &back)
				if req.Config == nil || req.Config.validate() != nil || back.Report.ExitCode == nil {
					b.Fatal("bad round trip")
				}
			}
		})
		b.Run(tc.name+"/gob", func(b *testing.B) {
			var reqs, reps bytes.Buffer
			enc, dec := newRequestEncoder(&reqs), newRequestReader(&reqs)
			rw, rr := newReplyWriter(&reps), newReplyReader(&reps)
			for b.Loop() {
				_ = enc.Encode(runnerRequest{Op: "start", ID: 1, Config: &cfg})
				req, err := dec.read()
				_ = rw.write(rep)
				back, berr := rr.read()
				if err != nil || berr != nil || req.Config == nil || req.Config.validate() != nil || back.Report.ExitCode == nil {
					b.Fatal("bad round trip", err, berr)
				}
			}
		})
	}
}

func codecConfig(argv int) helperConfig {
	cfg := helperConfig{ParentPID: 7, Timeout: time.Minute, Memory: 4 << 30, Workspace: 4 << 30, CPULimit: 61,
		FsizeLimit: 1 << 30, ASLimit: 5 << 30, ExitSignals: true, BwrapGate: argv > 1,
		Watch: []string{"/runs/exp_1/work", "/runs/exp_1/tmp"}, Stdout: "/runs/exp_1/stdout.log", Stderr: "/runs/exp_1/stderr.log",
		Dir: "/runs/exp_1/work", Env: []string{"PATH=/usr/bin:/bin", "HOME=/work", "LANG=C.UTF-8", "TMPDIR=/tmp"}, Argv: make([]string, argv)}
	for i := range cfg.Argv {
		cfg.Argv[i] = "--ro-bind-some-path-argument"
	}
	return cfg
}
