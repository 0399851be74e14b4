package main

import (
	"context"
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

func cmdVerify(ctx context.Context, args []string, io stdio) int {
	c, _, code, ok := parseCampaignOnly("verify", args, io)
	if !ok {
		return code
	}
	s, err := c.Open(ctx)
	if err != nil {
		return fail(io, err)
	}
	defer s.Close()
	findings, err := engine.Verify(ctx, c, s)
	if err != nil {
		return fail(io, err)
	}
	if len(findings) == 0 {
		fmt.Fprintln(io.out, "intact: every sealed input and artifact matches its recorded hash; the event chain is unbroken")
		return exitOK
	}
	for _, f := range findings {
		fmt.Fprintln(io.out, f)
	}
	return exitAttention
}
