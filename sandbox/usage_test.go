package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
)

// hogScript holds 100 MiB (every page written) and burns CPU for 2.5 s:
// long enough for two usage reports at UsageEvery.
const hogScript = `import time
b = bytearray(100 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
t = time.time()
while time.time() - t < 2.5:
    pass
`

// usageOutput is what the "usage" helper mode prints: the run and the
// usage reports it received.
type usageOutput struct {
	Result Result
	Err    string
	Usage  []Usage
}

// usageRecorder collects a run's usage reports.
type usageRecorder struct {
	mu  sync.Mutex
	got []Usage
}

func (r *usageRecorder) add(u Usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, u)
}

func (r *usageRecorder) all() []Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Usage(nil), r.got...)
}

// runWithUsage is the "usage" helper mode: Run with Spec.Usage recording.
func runWithUsage() usageOutput {
	var spec Spec
	if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
		return usageOutput{Err: err.Error()}
	}
	var rec usageRecorder
	spec.Usage = rec.add
	res, err := Run(signalContext(), spec)
	CloseRunners()
	Settle()
	return usageOutput{Result: res, Err: errString(err), Usage: rec.all()}
}

// runUsage runs e with usage reports, in-process or as nobody.
func (e experiment) runUsage(t *testing.T) usageOutput {
	t.Helper()
	spec := e.spec(t)
	if !e.asNobody {
		var rec usageRecorder
		spec.Usage = rec.add
		res, err := Run(context.Background(), spec)
		return usageOutput{Result: res, Err: errString(err), Usage: rec.all()}
	}
	cmd := nobodyCommand(t, "usage")
	in, err := json.Marshal(spec)
	must(t, err)
	cmd.Stdin = bytes.NewReader(in)
	var out usageOutput
	runJSON(t, cmd, &out)
	return out
}

// TestLiveUsageOfARunningTree: a run asked for its usage reports its
// tree's CPU, memory and process count about once a second while it runs,
// under every backend: a CPU burner holding 100 MiB shows CPU above 0 and
// its 100 MiB (plus the interpreter, under 300 MiB).
func TestLiveUsageOfARunningTree(t *testing.T) {
	requireRoot(t)
	for _, bc := range backendCases {
		t.Run(bc.name, func(t *testing.T) {
			e := experiment{backend: bc.backend, asNobody: bc.asNobody, command: []string{"python3", "-c", hogScript}}
			out := e.runUsage(t)
			if out.Err != "" || out.Result.ReturnCode == nil || *out.Result.ReturnCode != 0 {
				t.Fatalf("run: %s %+v (stderr %q)", out.Err, out.Result.ReturnCode, out.Result.StderrTail)
			}
			if err := checkUsage(out.Usage); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkUsage holds the reports of hogScript to what it does.
func checkUsage(us []Usage) error {
	if len(us) < 2 {
		return fmt.Errorf("%d usage reports in a 2.5 s run, want at least 2: %+v", len(us), us)
	}
	var peak int64
	cpu := 0.0
	for i, u := range us {
		if u.Processes < 1 || u.At.IsZero() {
			return fmt.Errorf("report %d: %+v", i, u)
		}
		if i > 0 {
			cpu = max(cpu, u.CPUPercent(us[i-1]))
			if !u.At.After(us[i-1].At) || u.CPUSeconds < us[i-1].CPUSeconds {
				return fmt.Errorf("reports %d and %d go back: %+v, %+v", i-1, i, us[i-1], u)
			}
		}
		peak = max(peak, u.RSSBytes)
	}
	if cpu <= 0 {
		return fmt.Errorf("no CPU between reports: %+v", us)
	}
	if peak < 100<<20 || peak > 300<<20 {
		return fmt.Errorf("largest memory %d bytes, want 100–300 MiB: %+v", peak, us)
	}
	return nil
}

func TestUsageCPUPercent(t *testing.T) {
	t0 := Usage{}.At
	base := Usage{CPUSeconds: 1, At: t0.AddDate(2026, 0, 0)}
	cases := []struct {
		name string
		prev Usage
		u    Usage
		want float64
	}{
		{"no earlier sample", Usage{}, base, 0},
		{"one core", base, Usage{CPUSeconds: 2, At: base.At.Add(UsageEvery)}, 100},
		{"two cores over 2 s", base, Usage{CPUSeconds: 5, At: base.At.Add(2 * UsageEvery)}, 200},
		{"same instant", base, base, 0},
		{"tally went back", base, Usage{CPUSeconds: 0.5, At: base.At.Add(UsageEvery)}, 0},
	}
	for _, c := range cases {
		if got := c.u.CPUPercent(c.prev); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
