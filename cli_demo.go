package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/provider/scripted"
	"github.com/simjecture/simjecture/sandbox"
)

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
