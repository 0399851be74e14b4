package sandbox

import (
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkRequestCodec is one start request's encoding on the host and
// decoding in the runner, with a Bubblewrap-sized command line.
func BenchmarkRequestCodec(b *testing.B) {
	cfg := helperConfig{ParentPID: 7, Timeout: time.Minute, Memory: 4 << 30, Workspace: 4 << 30, CPULimit: 61,
		FsizeLimit: 1 << 30, ASLimit: 5 << 30, ExitSignals: true, BwrapGate: true,
		Watch: []string{"/runs/exp_1/work", "/runs/exp_1/tmp"}, Stdout: "/runs/exp_1/stdout.log", Stderr: "/runs/exp_1/stderr.log",
		Dir: "/runs/exp_1/work", Env: []string{"PATH=/usr/bin:/bin"}, Argv: make([]string, 90)}
	for i := range cfg.Argv {
		cfg.Argv[i] = "--ro-bind-some-path-argument"
	}
	for b.Loop() {
		js, _ := json.Marshal(runnerRequest{Op: "start", ID: 1, Config: &cfg})
		var req runnerRequest
		_ = json.Unmarshal(js, &req)
		if req.Config == nil || req.Config.validate() != nil {
			b.Fatal("bad round trip")
		}
	}
}
