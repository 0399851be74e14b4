package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/sandbox"
)

// cmdDoctor probes the execution backends, or one with --execution-backend:
// exit 0 when it (or, for all, auto) finds a usable one, else 1.
func cmdDoctor(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("doctor", io)
	backend := fs.String("execution-backend", "", "probe one backend: "+strings.Join(executionBackendNames(), ", "))
	asJSON := fs.Bool("json", false, "print JSON")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	io.out = engine.TerminalSafeText(io.out) // probe reasons quote other programs
	if fs.Changed("execution-backend") {
		b, err := sandbox.ParseBackend(*backend)
		if err != nil {
			return fail(io, fmt.Errorf("--execution-backend: %v: %w", err, engine.ErrInvalid))
		}
		rep := doctorReport(ctx, b)
		printReport(io, rep, *asJSON)
		if rep.Available {
			return exitOK
		}
		return exitAttention
	}
	return doctorAll(ctx, io, *asJSON)
}

// doctorReport probes one backend; only auto names a selected backend.
func doctorReport(ctx context.Context, b sandbox.Backend) sandbox.Report {
	rep := sandbox.Select(ctx, b)
	if b != sandbox.Auto {
		rep.Selected = ""
	}
	return rep
}

func printReport(io stdio, rep sandbox.Report, asJSON bool) {
	if asJSON {
		printJSON(io.out, rep)
		return
	}
	state := "available"
	if !rep.Available {
		state = "NOT available"
	}
	fmt.Fprintf(io.out, "%-20s %s — %s\n", rep.Backend, state, rep.Reason)
	if rep.Remedy != "" && !rep.Available {
		fmt.Fprintf(io.out, "%-20s remedy: %s\n", "", rep.Remedy)
	}
	if rep.Selected != "" {
		fmt.Fprintf(io.out, "%-20s auto selects: %s\n", "", rep.Selected)
	}
	if rep.Warning != "" {
		fmt.Fprintf(io.out, "%-20s WARNING: %s\n", "", rep.Warning)
	}
}

func doctorAll(ctx context.Context, io stdio, asJSON bool) int {
	var reports []sandbox.Report
	for _, b := range sandbox.Backends() {
		reports = append(reports, doctorReport(ctx, b.Name))
	}
	auto := doctorReport(ctx, sandbox.Auto) // listed once, as what auto selects
	agents := map[string]string{}
	for _, name := range doctorPrograms() {
		if p, err := exec.LookPath(name); err == nil {
			agents[name] = p
		}
	}
	self, _ := os.Executable()
	protection := engine.ProbeProtection(ctx, self)
	workers := workerStates(ctx)
	if asJSON {
		printJSON(io.out, map[string]any{"backends": reports, "agent_clis": agents, "auto": auto.Selected,
			"record_protection": protection, "workers": workers})
	} else {
		for _, r := range reports {
			printReport(io, r, false)
		}
		printAuto(io, auto)
		fmt.Fprintf(io.out, "record protection    %s\n", protectionText(protection))
		for name, p := range agents {
			fmt.Fprintf(io.out, "found %s at %s\n", name, p)
		}
		for _, w := range workers {
			fmt.Fprintf(io.out, "worker %-13s %s\n", w.ID, w.State)
		}
	}
	if auto.Available && auto.Selected != "" {
		return exitOK
	}
	return exitAttention
}

// doctorPrograms are the programs doctor looks for: each agent backend's
// CLI, from the table, and python3 (the demo's simulations).
func doctorPrograms() []string {
	var out []string
	for _, b := range engine.AgentBackends() {
		if b.Program != "" {
			out = append(out, b.Program)
		}
	}
	return append(out, "python3")
}

// protectionText is the doctor line for a record protection.
func protectionText(p string) string {
	if p == engine.ProtectionEnclosed {
		return "enclosed: agents see the campaign folder read-only but for their own folders"
	}
	return "record not protected from the agent (bubblewrap unavailable): agents run as this account"
}

// printAuto is the line of what auto selects (or why it selects none), and
// its warning for a cooperative fallback.
func printAuto(io stdio, rep sandbox.Report) {
	switch {
	case rep.Available && rep.Selected != "":
		fmt.Fprintf(io.out, "%-20s selects %s\n", sandbox.Auto, rep.Selected)
	default:
		fmt.Fprintf(io.out, "%-20s NOT available — %s\n", sandbox.Auto, rep.Reason)
	}
	if rep.FallbackReason != "" {
		fmt.Fprintf(io.out, "%-20s fallback: %s\n", "", rep.FallbackReason)
	}
	if rep.Warning != "" {
		fmt.Fprintf(io.out, "%-20s WARNING: %s\n", "", rep.Warning)
	}
}
