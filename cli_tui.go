package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/tui"
)

// cmdTUI starts the terminal UI: the home screen, or with --campaign the
// dashboard of one study (attached to its supervisor, if another process
// runs it).
func cmdTUI(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("tui", io)
	campaign := fs.String("campaign", "", "open the dashboard of the study in this folder")
	readOnly := fs.Bool("read-only", false, "watch only: disable pause, resume, cancel and new studies")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return fail(io, fmt.Errorf("%v: %w", err, errUsage))
	}
	if fs.NArg() > 0 {
		return fail(io, fmt.Errorf("unexpected argument %q: %w", fs.Arg(0), errUsage))
	}
	if !isTerminal(io.out) || !isTerminalReader(io.in) {
		return fail(io, fmt.Errorf("the terminal UI needs a terminal; use `simjecture status`, `watch` or `--batch`: %w", errUsage))
	}
	opt := tuiOptions(io)
	opt.ReadOnly = *readOnly
	if *campaign != "" {
		c, err := engine.NewCampaign(*campaign)
		if err != nil {
			return fail(io, err)
		}
		if !c.Exists() {
			return fail(io, fmt.Errorf("%s holds no simjecture study: %w", c.Dir, engine.ErrInvalid))
		}
		opt.Campaign = c.Dir
	}
	if _, err := tui.Run(ctx, opt); err != nil && !errors.Is(err, context.Canceled) {
		return fail(io, err)
	}
	return exitOK
}

// runDashboard shows the dashboard for a study this process supervises.
// It runs sup.Run itself (the caller must not), lets the operator pause,
// resume and cancel it, and returns when the operator leaves: a study still
// running then is paused first (after asking), so final is its status at
// that point ("paused", or the status the study ended with). The caller
// still owns sup and closes it. Without a terminal on stdin and stdout it
// falls back to the headless status line.
func runDashboard(ctx context.Context, sup *engine.Supervisor, io stdio) (final engine.Status, err error) {
	if !isTerminal(io.out) || !isTerminalReader(io.in) {
		return runHeadless(ctx, sup, false, io)
	}
	opt := tuiOptions(io)
	opt.Supervisor = sup
	final, err = tui.Run(ctx, opt)
	if err != nil && errors.Is(err, context.Canceled) {
		err = nil
	}
	if final == "" {
		snap, serr := sup.View().DisplaySnapshot(context.WithoutCancel(ctx))
		if serr == nil {
			final = snap.Status
		}
	}
	return final, err
}

// tuiOptions wires the UI to this binary: launching a supervisor with the
// study's agent, and creating the demo.
func tuiOptions(io stdio) tui.Options {
	def := preselectable(os.Getenv("SIMJECTURE_DEFAULT_EXECUTION_BACKEND"))
	return tui.Options{
		Root: workspaceRoot(), DefaultBackend: def, In: io.in, Out: io.out,
		Launch: launchSupervisor,
		Demo: func(ctx context.Context) (string, error) {
			c, err := engine.NewCampaign(newDemoDir())
			if err != nil {
				return "", err
			}
			return c.Dir, createDemo(ctx, c)
		},
	}
}

// launchSupervisor opens a supervisor for the study in dir with the agent
// of its frozen contract.
func launchSupervisor(ctx context.Context, dir string) (*engine.Supervisor, error) {
	c, err := engine.NewCampaign(dir)
	if err != nil {
		return nil, err
	}
	return openStudy(ctx, c)
}

func isTerminalReader(r any) bool { return isTerminal(r) }
