package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/provider/scripted"
	"github.com/simjecture/simjecture/sandbox"
)

func cmdDoctor(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("doctor", io)
	backend := fs.String("execution-backend", "", "probe one backend: "+strings.Join(executionBackendNames(), ", "))
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return fail(io, fmt.Errorf("%v: %w", err, errUsage))
	}
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
	for _, b := range doctorOrder() {
		reports = append(reports, doctorReport(ctx, b))
	}
	agents := map[string]string{}
	for _, name := range []string{"codex", "python3"} {
		if p, err := exec.LookPath(name); err == nil {
			agents[name] = p
		}
	}
	auto := reports[len(reports)-1]
	self, _ := os.Executable()
	protection := engine.ProbeProtection(ctx, self)
	if asJSON {
		printJSON(io.out, map[string]any{"backends": reports, "agent_clis": agents, "auto": auto.Selected,
			"record_protection": protection})
	} else {
		for _, r := range reports {
			printReport(io, r, false)
		}
		fmt.Fprintf(io.out, "record protection    %s\n", protectionText(protection))
		for name, p := range agents {
			fmt.Fprintf(io.out, "found %s at %s\n", name, p)
		}
	}
	if auto.Available && auto.Selected != "" {
		return exitOK
	}
	return exitAttention
}

func cmdDemo(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("demo", io)
	batch := fs.Bool("batch", false, "run headless")
	jsonl := fs.Bool("jsonl", false, "one JSON event per line on stdout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return fail(io, fmt.Errorf("%v: %w", err, errUsage))
	}
	if fs.NArg() > 1 {
		return fail(io, fmt.Errorf("demo takes at most one folder: %w", errUsage))
	}
	dir := fs.Arg(0)
	if dir == "" {
		dir = newDemoDir()
	}
	c, err := engine.NewCampaign(dir)
	if err != nil {
		return fail(io, err)
	}
	if !c.Exists() {
		if err := createDemo(ctx, c); err != nil {
			return fail(io, err)
		}
	}
	fmt.Fprintf(io.err, "Demo study: %s\n", c.Dir)
	return supervise(ctx, c, *batch, *jsonl, io)
}

func createDemo(ctx context.Context, c engine.Campaign) error {
	tmp, err := os.MkdirTemp("", "simjecture-demo-")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer os.RemoveAll(tmp)
	hyp, ins := filepath.Join(tmp, "hypothesis.txt"), filepath.Join(tmp, "instructions.txt")
	if err := os.WriteFile(hyp, []byte(scripted.DemoHypothesis()), 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.WriteFile(ins, []byte(scripted.DemoInstructions()), 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(c.Dir), 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	req := engine.Request{HypothesisFile: hyp, InstructionsFile: ins, Mode: "minimal", AgentBackend: "scripted",
		ExecutionBackend: envOr("SIMJECTURE_DEFAULT_EXECUTION_BACKEND", "auto"), CompletionPolicy: "repair",
		WallSeconds: 900, TurnSeconds: 120}
	_, err = engine.CreateStudy(ctx, c, req, sandbox.Select)
	return err
}

// newDemoDir is a new demo folder under the workspace root, named by the time.
func newDemoDir() string {
	return filepath.Join(workspaceRoot(), "demo-"+time.Now().UTC().Format("20060102-150405"))
}

func workspaceRoot() string {
	if w := os.Getenv("SIMJECTURE_WORKSPACE"); w != "" {
		return w
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "simjecture-studies"
	}
	return filepath.Join(home, "simjecture", "studies")
}

// protectionText is the doctor line for a record protection.
func protectionText(p string) string {
	if p == engine.ProtectionEnclosed {
		return "enclosed: agents see the campaign folder read-only but for their own folders"
	}
	return "record not protected from the agent (bubblewrap unavailable): agents run as this account"
}
