package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
)

func newFlagSet(name string, io stdio) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		fmt.Fprintf(io.err, "Usage of simjecture %s:\n%s", name, fs.FlagUsages())
	}
	return fs
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// parseCampaignOnly parses commands whose only flags are --campaign and a few booleans.
func parseCampaignOnly(name string, args []string, io stdio, bools ...string) (engine.Campaign, map[string]bool, int, bool) {
	fs := newFlagSet(name, io)
	campaign := fs.String("campaign", os.Getenv("SIMJECTURE_STUDY"), "campaign folder (required)")
	vals := map[string]*bool{}
	for _, b := range bools {
		vals[b] = fs.Bool(b, false, b)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return engine.Campaign{}, nil, exitOK, false
		}
		return engine.Campaign{}, nil, fail(io, fmt.Errorf("%v: %w", err, errUsage)), false
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return c, nil, fail(io, err), false
	}
	out := map[string]bool{}
	for k, v := range vals {
		out[k] = *v
	}
	return c, out, 0, true
}
