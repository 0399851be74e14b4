package main

import (
	"context"
	"errors"
	"fmt"
	"os"

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
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	if !interactive(io) {
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

// tuiOptions wires the UI to this binary: launching a supervisor with the
// study's agent, and creating the demo.
func tuiOptions(io stdio) tui.Options {
	def := preselectable(os.Getenv("SIMJECTURE_DEFAULT_EXECUTION_BACKEND"))
	return tui.Options{
		Root: workspaceRoot(), DefaultBackend: def, In: io.in, Out: io.out,
		Launch: launchSupervisor, Detach: detachSelf,
		Demo: func(ctx context.Context) (string, error) {
			c, err := engine.NewCampaign(newDemoDir())
			if err != nil {
				return "", err
			}
			return c.Dir, createDemo(ctx, c)
		},
	}
}

// detachSelf starts a detached `resume --batch` of this binary for the
// study in dir: the TUI's "leave it running in the background".
func detachSelf(dir string) (tui.Detached, error) {
	self, err := os.Executable()
	if err != nil {
		return tui.Detached{}, fmt.Errorf("find own binary: %w", err)
	}
	return detachSupervisor(self, dir)
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
