package main

import (
	"context"
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

func cmdControl(command string) func(context.Context, []string, stdio) int {
	return func(ctx context.Context, args []string, io stdio) int {
		c, _, code, ok := parseCampaignOnly(command, args, io)
		if !ok {
			return code
		}
		status, err := engine.Control(ctx, c, nil, engine.Command(command))
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
