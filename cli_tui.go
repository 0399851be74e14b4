package main

import (
	"context"
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

// cmdTUI starts the terminal UI.
func cmdTUI(_ context.Context, _ []string, io stdio) int {
	return fail(io, fmt.Errorf("the terminal UI is not in this build yet; use `simjecture demo --batch` or `simjecture study ... --batch`: %w", engine.ErrInvalid))
}
