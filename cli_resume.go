package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
)

func cmdResume(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("resume", io)
	campaign := fs.String("campaign", "", "campaign folder (required)")
	batch := fs.Bool("batch", false, "run headless")
	jsonl := fs.Bool("jsonl", false, "with --batch: one JSON event per line on stdout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return fail(io, fmt.Errorf("%v: %w", err, errUsage))
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return fail(io, err)
	}
	if !c.Exists() {
		return fail(io, fmt.Errorf("%s holds no simjecture study: %w", c.Dir, engine.ErrInvalid))
	}
	return supervise(ctx, c, *batch, *jsonl, io)
}
