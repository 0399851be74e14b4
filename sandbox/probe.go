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
	switch b {
	case Bubblewrap:
		return probeBubblewrap(ctx)
	case ProotCooperative:
		return probeProot(ctx)
	case ProcessCooperative:
		return probeProcess()
	case Auto:
		return Select(ctx, Auto)
	}
	return Report{Backend: b, Reason: "unknown execution backend " + string(b)}
}

// Select probes the requested backend. An explicit backend is never replaced,
// even when unavailable. Auto tries Bubblewrap, then (not as root) PRoot, and
// never picks process-cooperative; when both fail it returns the unavailable
// Bubblewrap report with Selected empty.
func Select(ctx context.Context, requested Backend) Report {
	if requested != Auto {
		r := Probe(ctx, requested)
		if r.Available {
			r.Selected = requested
		}
		return r
	}
	bw := probeBubblewrap(ctx)
	if bw.Available {
		bw.Selected = Bubblewrap
		return bw
	}
	if os.Geteuid() == 0 {
		return bw
	}
	pr := probeProot(ctx)
	if !pr.Available {
		return bw
	}
	pr.Selected = ProotCooperative
	pr.FallbackReason = "bubblewrap unavailable: " + bw.Reason
	pr.Warning = WarningCooperative
	return pr
}

func probeBubblewrap(ctx context.Context) Report {
	r := Report{Backend: Bubblewrap, KernelIsolation: true, NetworkIsolation: true}
	bwrap, err := bwrapPath()
	if err != nil {
		r.Reason, r.Remedy = "Missing bubblewrap executable", "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
		return r
	}
	// No --die-with-parent: bwrap arms it only after cloning its child,
	// which then waits in eventfd_read for the launcher; a host killed in
	// between would leave that child blocked forever under init. The probe
	// ends by itself (true), so it needs no parent-death signal.
	r.Available, r.Reason = runProbe(ctx, bwrap, "--unshare-all", "--ro-bind", "/", "/", "/usr/bin/true")
	if !r.Available {
		r.Remedy = RemedyBubblewrap
	}
	return r
}

func probeProot(ctx context.Context) Report {
	r := Report{Backend: ProotCooperative}
	if os.Geteuid() == 0 {
		r.Reason, r.Remedy = ReasonUnprivileged, RemedyUnprivileged
		return r
	}
	proot, err := prootPath()
	if err != nil {
		r.Reason, r.Remedy = "Missing proot executable", RemedyProot
		return r
	}
	r.Available, r.Reason = runProbe(ctx, proot, "-r", "/", "/usr/bin/true")
	if !r.Available {
		r.Remedy = RemedyProot
	}
	return r
}

func probeProcess() Report {
	r := Report{Backend: ProcessCooperative}
	if os.Geteuid() == 0 {
		r.Reason, r.Remedy = ReasonUnprivileged, RemedyUnprivileged
		return r
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		r.Reason = "/proc is not available for process-tree monitoring"
		return r
	}
	r.Available, r.Reason = true, ReasonProbePassed
	return r
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
