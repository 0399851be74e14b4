package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Probe wording shared with doctor and the installer.
const (
	ReasonProbePassed   = "Execution probe passed"
	ReasonUnprivileged  = "cooperative execution requires an unprivileged account"
	RemedyUnprivileged  = "run as a dedicated non-root account (see: simjecture install)"
	RemedyBubblewrap    = "enable unprivileged user namespaces for this account, or choose proot-cooperative explicitly on a dedicated unprivileged account (not a security sandbox; it shares host networking)"
	RemedyProot         = "install proot (Debian/Ubuntu: apt-get install proot) or run: simjecture install"
	WarningCooperative  = "PRoot cooperative execution is not a security sandbox: the host network is shared and read-only views are not kernel-enforced; run trusted code only"
	probeTimeout        = 10 * time.Second
	probeReasonMaxChars = 2000
)

// Probe checks whether backend b can run experiments on this host as this
// account. Probe(ctx, Auto) is Select(ctx, Auto).
func Probe(ctx context.Context, b Backend) Report {
	if b == Auto {
		return Select(ctx, Auto)
	}
	info, ok := Describe(b)
	if !ok {
		return Report{Backend: b, Reason: "unknown execution backend " + string(b)}
	}
	return info.probe(ctx)
}

// Select probes the requested backend. An explicit backend is never replaced,
// even when unavailable. Auto tries the table's auto candidates in order
// (Bubblewrap, then, not as root, PRoot; never process-cooperative); when
// every one fails it returns the first one's unavailable report with
// Selected empty.
func Select(ctx context.Context, requested Backend) Report {
	if requested != Auto {
		r := Probe(ctx, requested)
		if r.Available {
			r.Selected = requested
		}
		return r
	}
	var first Report
	for i, info := range autoCandidates() {
		if info.Cooperative && os.Geteuid() == 0 {
			break // root never qualifies for a cooperative fallback
		}
		r := info.probe(ctx)
		if i == 0 {
			first = r
		}
		if !r.Available {
			continue
		}
		r.Selected, r.Warning = info.Name, info.Warning
		if i > 0 {
			r.FallbackReason = string(first.Backend) + " unavailable: " + first.Reason
		}
		return r
	}
	return first
}

// autoCandidates are the rows auto may pick, in order.
func autoCandidates() []BackendInfo {
	var out []BackendInfo
	for _, info := range backendTable {
		if info.AutoCandidate {
			out = append(out, info)
		}
	}
	return out
}

// runProbe runs the probe command with a 10 s limit. A failure's reason is
// the last 2000 characters of its stderr, or the error when stderr is empty.
func runProbe(ctx context.Context, exe string, args ...string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return true, ReasonProbePassed
	}
	reason := strings.TrimSpace(stderr.String())
	if reason == "" {
		reason = err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = "execution probe timed out after 10s"
		}
	}
	if r := []rune(reason); len(r) > probeReasonMaxChars {
		reason = string(r[len(r)-probeReasonMaxChars:])
	}
	return false, reason
}
