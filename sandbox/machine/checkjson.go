package machine

import (
	"encoding/json"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// MarshalJSON writes the figures a check could not learn (the worker was
// not reached: no protocol, clock or backend probe) as null, never as Go's
// zero values (contract section 6: unknown figures are null), in the
// fields' order.
func (r CheckReport) MarshalJSON() ([]byte, error) {
	out := struct {
		Worker     string          `json:"worker"`
		Ready      bool            `json:"ready"`
		Reason     string          `json:"reason,omitempty"`
		Protocol   *string         `json:"protocol"`
		Host       string          `json:"host,omitempty"`
		UID        *int            `json:"uid"`
		Clock      *time.Time      `json:"clock"`
		ClockSkew  *float64        `json:"clock_skew_seconds"`
		Backend    *sandbox.Report `json:"backend"`
		CPUs       int             `json:"cpus"`
		MemoryMB   int64           `json:"memory_mb"`
		MaxJobs    int             `json:"max_jobs"`
		Experiment *CheckRun       `json:"experiment"`
	}{Worker: r.Worker, Ready: r.Ready, Reason: r.Reason, Host: r.Host, UID: r.UID, ClockSkew: r.ClockSkew,
		CPUs: r.CPUs, MemoryMB: r.MemoryMB, MaxJobs: r.MaxJobs, Experiment: r.Experiment}
	if r.Protocol != "" {
		out.Protocol = &r.Protocol
	}
	if !r.Clock.IsZero() {
		out.Clock = &r.Clock
	}
	if r.Backend != (sandbox.Report{}) {
		out.Backend = &r.Backend
	}
	return json.Marshal(out)
}
