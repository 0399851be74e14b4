package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

// cmdVerify re-hashes every sealed input and artifact of a study and checks
// its event chain: exit 0 when intact, 1 with the findings.
func cmdVerify(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("verify", io)
	campaign := campaignFlag(fs)
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return fail(io, err)
	}
	s, err := c.Open(ctx)
	if err != nil && !errors.Is(err, engine.ErrInvalid) {
		// A store SQLite cannot open is a finding about the record.
		fmt.Fprintf(io.out, "store: the database cannot be opened (%s)\n", oneLine(err))
		return exitAttention
	}
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
		if engine.ReportFormatOf(c) == 0 && !engine.Owned(c) {
			fmt.Fprintln(io.out, "note: report.json and LEDGER.md were written by an earlier release: report.json was compared by what it says, LEDGER.md was not compared")
		}
		return exitOK
	}
	for _, f := range findings {
		fmt.Fprintln(io.out, f)
	}
	return exitAttention
}
