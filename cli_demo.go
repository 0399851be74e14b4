package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/provider/scripted"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/tui"
)

// cmdDemo creates the bundled demo study in DIR (default: a new folder
// under the workspace root), unless one is there, and runs it; with
// --replay it writes the bundled record of a finished demo instead and
// opens it read-only.
func cmdDemo(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("demo", io)
	batch := fs.Bool("batch", false, "run headless")
	jsonl := fs.Bool("jsonl", false, "one JSON event per line on stdout")
	replay := fs.Bool("replay", false, "write the bundled record of a finished demo into DIR and open it read-only; runs nothing")
	mode := fs.String("mode", "minimal", "scientific mode of a new demo: "+strings.Join(engine.Modes, ", "))
	if code, done := parse(fs, args, 1, io); done {
		return code
	}
	if err := checkDemoEnv(fs.Arg(0) == ""); err != nil {
		return fail(io, err)
	}
	if *replay {
		if fs.Changed("mode") {
			return fail(io, fmt.Errorf("--mode does not apply to --replay (the bundled record is a minimal study): %w", errUsage))
		}
		if *jsonl {
			return fail(io, fmt.Errorf("--jsonl does not apply to --replay: %w", errUsage))
		}
		return replayDemo(ctx, fs.Arg(0), *batch, io)
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
		if err := createDemo(ctx, c, *mode); err != nil {
			if reps := demoBackendsUnavailable(ctx); reps != nil {
				return noBackend(io, reps)
			}
			return fail(io, err)
		}
	}
	fmt.Fprintf(io.err, "Demo study: %s\n", c.Dir)
	return supervise(ctx, c, *batch, *jsonl, io)
}

// createDemo creates the bundled demo study in c in mode: the scripted
// agent (in every role), with the fallback execution backend unless the
// environment names one.
func createDemo(ctx context.Context, c engine.Campaign, mode string) error {
	req := engine.Request{Mode: mode, AgentBackend: "scripted",
		ExecutionBackend: demoBackend(), CompletionPolicy: "repair",
		WallSeconds: 900, TurnSeconds: 120}
	_, err := engine.CreateStudyText(ctx, c, req, scripted.DemoHypothesis(), scripted.DemoInstructions())
	return err
}

// checkDemoEnv checks, before anything is written, the variables the demo
// uses, naming the variable: the workspace root (when the demo goes under
// it) and the execution backend's default.
func checkDemoEnv(underWorkspace bool) error {
	if underWorkspace {
		if err := checkWorkspace(); err != nil {
			return err
		}
	}
	for _, d := range envDefaults {
		if v := os.Getenv(d.env); d.flag == "execution-backend" && v != "" {
			if err := d.check(v); err != nil {
				return fmt.Errorf("%s=%q: %w: %w", d.env, v, err, engine.ErrInvalid)
			}
		}
	}
	return nil
}

// demoBackend is the execution backend the demo asks for.
func demoBackend() string { return envOr("SIMJECTURE_DEFAULT_EXECUTION_BACKEND", string(sandbox.Auto)) }

// newDemoDir is a new demo folder under the workspace root, named by the time.
func newDemoDir() string { return workspaceDir("demo-") }

// workspaceDir is a new folder under the workspace root, named by prefix
// and the time.
func workspaceDir(prefix string) string {
	return filepath.Join(workspaceRoot(), prefix+time.Now().UTC().Format("20060102-150405"))
}

// demoBackendsUnavailable is nil when the demo asks for an explicit
// backend or auto can pick one; else it is the probe report of every
// backend auto tries (bubblewrap, then proot-cooperative).
func demoBackendsUnavailable(ctx context.Context) []sandbox.Report {
	if demoBackend() != string(sandbox.Auto) || sandbox.Select(ctx, sandbox.Auto).Selected != "" {
		return nil
	}
	var out []sandbox.Report
	for _, b := range sandbox.Backends() {
		if b.AutoCandidate {
			out = append(out, sandbox.Probe(ctx, b.Name))
		}
	}
	return out
}

// noBackend says why the demo cannot run here and points at the replay:
// exit 2, nothing written.
func noBackend(io stdio, reps []sandbox.Report) int {
	fmt.Fprintln(io.err, "simjecture: no execution backend can run the demo on this host:")
	for _, r := range reps {
		fmt.Fprintf(io.err, "  %s: %s\n", r.Backend, strings.Join(strings.Fields(r.Reason), " "))
	}
	fmt.Fprintln(io.err, "Open the bundled record of a finished demo instead (runs nothing): simjecture demo --replay [DIR]")
	return exitInvalid
}

// replayDemo writes the bundled demo record into dir (default: a new
// folder under the workspace root) and opens it read-only: the dashboard,
// or its summary with batch or without a terminal.
func replayDemo(ctx context.Context, dir string, batch bool, io stdio) int {
	if dir == "" {
		dir = workspaceDir("demo-replay-")
	}
	c, err := engine.NewCampaign(dir)
	if err != nil {
		return fail(io, err)
	}
	if err := engine.WriteRecord(c); err != nil {
		return fail(io, err)
	}
	fmt.Fprintf(io.err, "Demo record: %s (the bundled record of a finished demo; nothing runs)\n", c.Dir)
	if !batch && interactive(io) {
		return cmdTUI(ctx, []string{"--campaign", c.Dir, "--read-only"}, io)
	}
	return printRecord(ctx, c, io)
}

// printRecord prints the summary the demo prints when it ends.
func printRecord(ctx context.Context, c engine.Campaign, io stdio) int {
	v, err := engine.OpenView(ctx, c)
	if err != nil {
		return fail(io, err)
	}
	defer v.Close()
	sum, err := v.Summary(ctx)
	if err != nil {
		return fail(io, err)
	}
	(&tui.Headless{View: v, Stdout: io.out, Stderr: io.err, TTY: isTerminal(io.err)}).Finish(ctx, sum.Status)
	return exitOK
}
