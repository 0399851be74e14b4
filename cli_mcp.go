package main

import (
	"context"
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

// cmdMCP serves the lab calls of a study over MCP on stdio.
func cmdMCP(_ context.Context, _ []string, io stdio) int {
	return fail(io, fmt.Errorf("the MCP server is not in this build yet: %w", engine.ErrInvalid))
}
