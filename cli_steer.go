package main

import (
	"context"
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

// cmdSteer queues advisory guidance for a study's worker (contract
// section 14): it reaches the next worker prompt and every review packet,
// and changes no contract, verdict or deadline.
func cmdSteer(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("steer", io)
	campaign := campaignFlag(fs)
	message := fs.String("message", "", fmt.Sprintf("the guidance, at most %d characters (required)", engine.MaxSteeringChars))
	key := fs.String("request-key", "", "make the request idempotent: the same key and text return the stored message")
	asJSON := fs.Bool("json", false, "print the stored message as JSON")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return fail(io, err)
	}
	res, err := engine.Steer(ctx, c, *message, *key)
	if err != nil {
		return fail(io, err)
	}
	if *asJSON {
		return printJSON(io.out, res)
	}
	if res.Existing {
		fmt.Fprintf(io.out, "guidance %s was queued before under this key (%s)\n", res.ID, res.CreatedAt)
	} else {
		fmt.Fprintf(io.out, "guidance %s queued; the next worker turn reads it (advisory)\n", res.ID)
	}
	return exitOK
}
