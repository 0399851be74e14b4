package main

import (
	"context"

	"github.com/simjecture/simjecture/engine"
)

// cmdResume resumes the study in --campaign with its frozen contract.
func cmdResume(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("resume", io)
	campaign := fs.String("campaign", "", "campaign folder (required)")
	batch := fs.Bool("batch", false, "run headless")
	jsonl := fs.Bool("jsonl", false, "with --batch: one JSON event per line on stdout")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return fail(io, err)
	}
	if !c.Exists() {
		return fail(io, c.NoStudy(ctx))
	}
	return supervise(ctx, c, *batch, *jsonl, io)
}
