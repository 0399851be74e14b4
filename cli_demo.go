package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/provider/scripted"
)

// cmdDemo creates the bundled demo study in DIR (default: a new folder
// under the workspace root), unless one is there, and runs it.
func cmdDemo(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("demo", io)
	batch := fs.Bool("batch", false, "run headless")
	jsonl := fs.Bool("jsonl", false, "one JSON event per line on stdout")
	if code, done := parse(fs, args, 1, io); done {
		return code
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

// createDemo creates the bundled demo study in c: the scripted agent, with
// the fallback execution backend unless the environment names one.
func createDemo(ctx context.Context, c engine.Campaign) error {
	req := engine.Request{Mode: "minimal", AgentBackend: "scripted",
		ExecutionBackend: envOr("SIMJECTURE_DEFAULT_EXECUTION_BACKEND", "auto"), CompletionPolicy: "repair",
		WallSeconds: 900, TurnSeconds: 120}
	_, err := engine.CreateStudyText(ctx, c, req, scripted.DemoHypothesis(), scripted.DemoInstructions())
	return err
}

// newDemoDir is a new demo folder under the workspace root, named by the time.
func newDemoDir() string {
	return filepath.Join(workspaceRoot(), "demo-"+time.Now().UTC().Format("20060102-150405"))
}
