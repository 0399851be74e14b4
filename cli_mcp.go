package main

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/engine/mcpserver"
)

// cmdMCP serves the lab calls of a study over MCP on stdio until the client
// closes stdin (contract section 2: `simjecture mcp --campaign DIR`).
func cmdMCP(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("mcp", io)
	campaign := campaignFlag(fs)
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
	lab, err := engine.OpenLab(ctx, c, runtime.NumCPU(), memoryMB())
	if err != nil {
		return fail(io, err)
	}
	defer lab.Close()
	if err := mcpserver.Serve(ctx, lab, buildVersion(), mcpserver.Stdio(os.Stdin, io.out)); err != nil {
		return fail(io, err)
	}
	return exitOK
}

// buildVersion is the module version this binary was built from.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}
