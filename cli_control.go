package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

// cmdControl is pause or cancel: it asks the supervisor of a study, in any
// process, to stop, or stops a study no supervisor runs.
func cmdControl(command string) func(context.Context, []string, stdio) int {
	return func(ctx context.Context, args []string, io stdio) int {
		fs := newFlagSet(command, io)
		campaign := campaignFlag(fs)
		if code, done := parse(fs, args, 0, io); done {
			return code
		}
		c, err := engine.NewCampaign(*campaign)
		if err != nil {
			return fail(io, err)
		}
		status, err := engine.Control(ctx, c, nil, engine.Command(command))
		if ended := (*engine.EndedError)(nil); errors.As(err, &ended) {
			fmt.Fprintln(io.out, ended.Error()) // nothing to do: not a failure (docs/campaign.md)
			return exitOK
		}
		if err != nil {
			return fail(io, err)
		}
		if status == "requested" {
			fmt.Fprintf(io.out, "%s requested; the supervisor acts within 1 s\n", command)
		} else {
			fmt.Fprintf(io.out, "no supervisor runs this study; it is now %s\n", status)
		}
		return exitOK
	}
}
