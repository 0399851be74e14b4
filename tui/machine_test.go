package tui

import (
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestMachineText: the experiment detail names where it ran.
func TestMachineText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		r    engine.Receipt
		want []string
	}{
		{engine.Receipt{Machine: "local"}, []string{"local", "this host"}},
		{engine.Receipt{}, []string{"local"}},
		{engine.Receipt{Machine: "gpu1", Remote: &engine.Remote{Host: "10.0.0.7", Job: "job_ab"}}, []string{"gpu1", "10.0.0.7", "job_ab"}},
	}
	for _, tc := range cases {
		got := machineText(tc.r)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("machineText(%+v) = %q, want it to contain %q", tc.r, got, w)
			}
		}
	}
}
